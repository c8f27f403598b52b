"""Benchmarks of the service: each reads the task formats of ../shared/data/FORMATS.md, prints a
human table and, with --json, one JSON object as its last line. `sandbox` runs test programs."""
