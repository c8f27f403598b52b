# One command to run, one to test. The environment is made once and reused while
# pyproject.toml and constraints-cpu.txt are unchanged (a stamp file records it).
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 2087

.PHONY: setup run test vsix clean

$(STAMP): pyproject.toml constraints-cpu.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints-cpu.txt -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/infill run --port $(PORT)

test: $(STAMP)
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
