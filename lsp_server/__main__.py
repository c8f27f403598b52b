"""`python -m lsp_server`: run the language server (see `lsp_server.main`)."""
import sys

from lsp_server.main import main

sys.exit(main())
