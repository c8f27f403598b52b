"""`python -m cli`: the `infill` command."""
import sys

from cli.main import main

sys.exit(main())
