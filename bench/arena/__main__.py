"""`python -m bench.arena`: see `bench.arena.cli`."""
import sys

from bench.arena.cli import main

sys.exit(main())
