# One command to run, one to test. The environments are made once and reused while
# pyproject.toml and constraints-cpu.txt (Python) or package-lock.json (the VS Code extension)
# are unchanged (stamp files record it).
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
VSCODE := editors/vscode
NODE_STAMP := $(VSCODE)/node_modules/.installed
PORT ?= 2087
GATEWAY_PORT ?= 8012

.PHONY: setup run test vsix clean

$(STAMP): pyproject.toml constraints-cpu.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints-cpu.txt -e ".[dev]"
	touch $(STAMP)

$(NODE_STAMP): $(VSCODE)/package-lock.json
	cd $(VSCODE) && npm ci --loglevel=error --no-audit --no-fund
	touch $(NODE_STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/infill run --port $(PORT) --gateway-port $(GATEWAY_PORT)

test: $(STAMP) $(NODE_STAMP)
	$(PY) -m pytest -q -rs
	cd $(VSCODE) && npm test --silent

vsix: $(NODE_STAMP)
	cd $(VSCODE) && npm run --silent package

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache $(VSCODE)/node_modules $(VSCODE)/dist $(VSCODE)/out $(VSCODE)/infill.vsix
