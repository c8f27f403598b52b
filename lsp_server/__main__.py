"""`python -m lsp_server`: run the language server (see `lsp_server.server`)."""
import sys

from lsp_server.server import main

sys.exit(main())
