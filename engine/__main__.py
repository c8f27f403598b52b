"""`python -m engine`: run the worker process (see `engine.worker.cli`)."""
import sys

from engine.worker.cli import main

sys.exit(main(prog="python -m engine"))
