"""`python -m engine`: run the worker process (see `engine.worker`)."""
import sys

from engine.worker import main

sys.exit(main(prog="python -m engine"))
