# a0nb — two commands matter: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
export LITELLM_LOCAL_MODEL_COST_MAP := True
export LITELLM_OFFLINE_MODE := true
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Everything here runs as in a user's kernel, where Python writes its bytecode caches (a0nb itself never reads
# or writes one for a user's file: tests/files/test_source_import.py); a PYTHONDONTWRITEBYTECODE in the
# environment would hide that difference, and make every run compile the tests again
unexport PYTHONDONTWRITEBYTECODE
# folder trust (docs/security.md): the project's own tests, notebooks and benchmarks run their folders' code
TRUST_SELF := A0NB_TRUST='*'

.PHONY: test test-fast lint demo lab bench soak install browser-deps clean cassettes

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,browser,local,memory,mcp,ray,documents]'
	$(BIN)/python -m compileall -q extensions tools agents plugins providers  # (as pip does a wheel's files: a0nb reads these caches, never writes them)
	touch $(STAMP)

install: $(STAMP)

browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium missing and cannot be installed here: the browser test will be skipped (loudly)"; fi; }

# The inner loop: unit tests of every layer (no browser, no notebooks, no real kernels), under 30 s on two
# cores: one pytest-xdist worker per core. `make test` stays serial (real servers, kernels and a browser).
FAST := tests/files tests/engine tests/providers tests/inspector tests/test_ext.py

test-fast: $(STAMP)
	$(TRUST_SELF) $(BIN)/python -m pytest -q -x -m "not slow" -n auto $(FAST) $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/mypy a0nb

test: $(STAMP) browser-deps lint
	$(TRUST_SELF) $(BIN)/python -m pytest -q -ra tests notebooks --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg $(PYTEST_ARGS)

demo: $(STAMP)
	$(BIN)/python -m a0nb kernel install --sys-prefix
	A0NB_TRUST=$(CURDIR)/notebooks $(BIN)/python -m a0nb demo

lab: $(STAMP)
	A0NB_TRUST=$(CURDIR)/notebooks $(BIN)/jupyter lab --no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port_retries=0 $$( [ "$$(id -u)" = 0 ] && echo --allow-root ) notebooks

bench: $(STAMP)
	$(TRUST_SELF) A0NB_APPROVAL=auto $(BIN)/python benchmarks/run_all.py

soak: $(STAMP)
	$(TRUST_SELF) A0NB_SOAK_COUNT=50 $(BIN)/python -m pytest -q -s tests/reliability -k soak

clean:
	rm -rf $(VENV) build dist test-artifacts demo-output

cassettes: $(STAMP)
	A0NB_TRUST=$(CURDIR)/notebooks $(BIN)/python notebooks/record_cassettes.py
