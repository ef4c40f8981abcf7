# Gatehouse. The two commands that matter:
#
#   make run    set up what is missing, then serve the app and a run worker on http://127.0.0.1:$(PORT)
#   make test   set up what is missing (with the development tools), then run every check
#
# Both work on a machine that has never seen the project, and skip the set-up steps that are
# already done, so running them again is fast.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
PIP_INSTALL := $(PY) -m pip install --quiet --disable-pip-version-check
BENCHMARKS := tests/benchmarks/graph_core.py tests/benchmarks/http_validate.py \
	tests/benchmarks/live_validation.py tests/benchmarks/engine.py tests/benchmarks/inbox.py \
	tests/benchmarks/schemas.py tests/benchmarks/map_pool.py tests/benchmarks/streams.py \
	tests/benchmarks/browser_editor.py tests/benchmarks/run_page.py tests/benchmarks/mcp_tools.py \
	tests/benchmarks/sleeping.py tests/benchmarks/browser_test_runs.py tests/benchmarks/compare_page.py \
	tests/benchmarks/newcomer_job.py tests/benchmarks/inbox_views.py tests/benchmarks/deadlines.py

# The local server: development mode, and a secret key kept under var/ unless one is given.
DEV_ENV := DEBUG=true $(if $(SECRET_KEY)$(SECRET_KEY_FILE),,SECRET_KEY_FILE=var/dev-secret-key) \
	$(if $(GATEHOUSE_BASE_URL),,GATEHOUSE_BASE_URL=http://127.0.0.1:$(PORT))

.PHONY: help run test test-processes lint bench bench-scale bench-workers load faults fuzz schema setup setup-dev graphviz chromium

help:
	@echo "make run     set up, migrate, create the first user and the demo, serve and run a worker on 127.0.0.1:$(PORT)"
	@echo "make test    set up with the development tools, then import contracts, lint, pytest"
	@echo "make lint    import contracts, ruff check, ruff format --check, mypy"
	@echo "make bench   the graph core, /v1/graphs/validate, live validation, the engine, the inbox, schemas, map pool, streams, the run page, the editor in Chromium, test runs on the canvas, comparing runs,"
	@echo "             the newcomer job's clicks, the inbox for a person at 10,000 cards, 1,000 deadlines due in one minute"
	@echo "make bench-scale  every page and list at 10,000 documents and 100,000 runs (SQLite, private PostgreSQL), then workers' scale-out"
	@echo "make bench-workers  runs/s with 1, 2 and 4 db_worker processes on a private PostgreSQL, then"
	@echo "             the payroll example's map over 200 employees on 1 and 4 workers"
	@echo "make load    load test: gunicorn, PostgreSQL and 2 run workers under authors, API clients, approvers"
	@echo "             (LOAD_ARGS=\"--duration 600 --streams 200 --attack\": with open streams and an attacker)"
	@echo "make faults  fault tests: kill -9 a worker, restart PostgreSQL, fill the body cap (private PostgreSQL)"
	@echo "make fuzz    the fuzzers for longer: the parser, expressions and pages (Hypothesis), /v1 (Schemathesis)"
	@echo "make schema  regenerate docs/schemas/graph.schema.json"

# --- Python and its packages -------------------------------------------------------------------

# The first Python >= 3.12 that actually runs: pyenv's shims on PATH exist for every installed
# version but refuse to run one that is not selected, so each candidate is run, not looked up.
$(PY):
	@found=""; \
	pyenv_root="$$(pyenv root 2>/dev/null || true)"; \
	for candidate in python3.13 python3.12 python3 \
		$${pyenv_root:+$$pyenv_root/versions/3.1[2-9]*/bin/python3} \
		"$$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3; do \
		if "$$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1; then \
			found="$$candidate"; break; \
		fi; \
	done; \
	if [ -z "$$found" ]; then \
		echo "Gatehouse needs Python 3.12 or newer (Django 6 requires it), and none was found." >&2; \
		echo "Looked for python3.13, python3.12 and python3 on PATH, then" \
			"$${pyenv_root:-\$$(pyenv root)}/versions/3.1[2-9]*/bin/python3 and" \
			"$$HOME/.pyenv/versions/3.1[2-9]*/bin/python3." >&2; \
		echo "Install one (for example: pyenv install 3.12) and run make again." >&2; \
		exit 1; \
	fi; \
	echo "Creating $(VENV) with $$found ($$("$$found" -c 'import platform; print(platform.python_version())'))"; \
	"$$found" -m venv --clear $(VENV)

# Stamp files record what was installed; pip runs again only when a requirements file changes.
$(VENV)/.runtime-installed: requirements.txt $(PY)
	@echo "Installing requirements.txt"
	@$(PIP_INSTALL) -r requirements.txt
	@touch $@

$(VENV)/.dev-installed: requirements-dev.txt requirements.txt $(PY)
	@echo "Installing requirements-dev.txt"
	@$(PIP_INSTALL) -r requirements-dev.txt
	@touch $@

# --- System packages ---------------------------------------------------------------------------

# $(call debian_install,PACKAGE,WHAT,WHY): install a Debian package as root, or say how to.
debian_install = if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	echo "Installing $(2) (Debian package $(1))"; \
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; \
	else echo "$(2) is missing. $(3) On Debian or Ubuntu: sudo apt-get install $(1)" >&2; fi

graphviz:
	@if ! command -v dot >/dev/null 2>&1; then \
		$(call debian_install,graphviz,Graphviz (the dot program),Gatehouse draws graphs with it.); \
		command -v dot >/dev/null 2>&1 || { echo "Install Graphviz (macOS: brew install graphviz), then run make again." >&2; exit 1; }; \
	fi

# Browser tests drive Debian's Chromium; without it they cannot run, the rest of the suite can.
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		$(call debian_install,chromium,Chromium at /usr/bin/chromium,The browser tests need it.); \
	fi

# --- Set-up ------------------------------------------------------------------------------------

setup: $(VENV)/.runtime-installed graphviz

setup-dev: setup $(VENV)/.dev-installed chromium

var/dev-secret-key: | $(PY)
	@mkdir -p -m 700 var
	@umask 077 && $(PY) -c 'import secrets; print(secrets.token_urlsafe(50))' > $@

# --- The two commands --------------------------------------------------------------------------

run: setup var/dev-secret-key
	@mkdir -p -m 700 var
	@$(DEV_ENV) $(PY) manage.py migrate --no-input --verbosity 0
	@$(DEV_ENV) $(PY) manage.py ensure_admin --base-url http://127.0.0.1:$(PORT)
	@$(DEV_ENV) $(PY) manage.py load_demo
	@# A run worker beside the web server, started afresh when a stuck drive made it exit
	@# (status 70, docs/engine.md); Ctrl-C (or the server stopping) stops both. The server
	@# is uvicorn, the ASGI server production runs inside gunicorn (docs/operations.md), so event
	@# streams behave here as they do there; it restarts when Python code or a template changes.
	@# Its HTTP protocol and timeouts are production's too (editor.server: headers within
	@# GATEHOUSE_HEADER_TIMEOUT, silence between requests GATEHOUSE_KEEP_ALIVE_TIMEOUT).
	@(trap 'kill $$child 2>/dev/null; wait $$child 2>/dev/null; exit 0' TERM INT; \
	  while :; do $(DEV_ENV) $(PY) manage.py db_worker --no-reload & child=$$!; \
	    wait $$child && status=0 || status=$$?; \
	    [ $$status -eq 70 ] || exit $$status; \
	    echo "The run worker stopped a stuck drive; starting a fresh one" >&2; done) & worker=$$!; \
	trap 'kill $$worker 2>/dev/null || true; wait $$worker 2>/dev/null || true' EXIT INT TERM; \
	$(DEV_ENV) $(PY) -m uvicorn editor.asgi:application --host 127.0.0.1 --port $(PORT) \
		--reload --reload-dir editor --reload-dir templates --reload-include '*.html' \
		--timeout-graceful-shutdown 1 --http editor.server:H11Protocol \
		--timeout-keep-alive $${GATEHOUSE_KEEP_ALIVE_TIMEOUT:-5}

# The suite in two steps: everything but the browser tests in TEST_PROCESSES processes
# (pytest-xdist; default one per core, from two to four; the hostile corpus keeps to one of them,
# tests/conftest.py), then the browser tests in one process of their own (they share one browser
# and the live server's in-memory database, which does not survive sharing a process with the
# rest of the suite under xdist).
TEST_PROCESSES ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 2 ? 2 : n > 4 ? 4 : n )))

test-processes:
	@echo $(TEST_PROCESSES)

test: setup-dev lint
	$(VENV)/bin/pytest -q -n $(TEST_PROCESSES) --dist loadgroup --ignore=tests/functional
	$(VENV)/bin/pytest -q tests/functional

# --- Other targets -----------------------------------------------------------------------------

# mypy's Django plugin loads editor.settings, which needs these when DEBUG is off; nothing is
# served or stored with them. Its cache is var/mypy (pyproject.toml).
MYPY_ENV := env -u SECRET_KEY_FILE DEBUG=false SECRET_KEY=mypy-only-not-a-secret ALLOWED_HOSTS=localhost

lint: $(VENV)/.dev-installed
	$(VENV)/bin/lint-imports --no-logo
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@mkdir -p -m 700 var
	$(MYPY_ENV) $(VENV)/bin/mypy

# The browser benchmark drives Chromium through Playwright (development tools).
bench: setup-dev
	@for benchmark in $(BENCHMARKS); do echo "== $$benchmark"; $(PY) "$$benchmark"; echo; done

# Outside make test: an installation after a year (10,000 documents, 100,000 runs, 1,000,000
# events) seeded in bulk on SQLite and on a private PostgreSQL cluster (initdb in a temporary
# folder, port GATEHOUSE_BENCH_PG_PORT, default 55444), then every page and API list timed;
# SCALE_ARGS passes options (sqlite or postgresql alone, --fraction 0.01 for a quick trial).
# Then the workers' scale-out: 2,000 runs with 1, 2 and 4 db_worker processes on PostgreSQL
# (make bench-workers alone; WORKERS_ARGS: --runs, --workers).
# make bench-workers also runs the payroll example's fan-out (its map over 200 employees, each
# payment a call to the example's MCP server) on 1 and 4 workers, checking no payment twice
# (PAYROLL_ARGS: --runs, --employees, --workers). It is here rather than in make bench because
# it is the same kind of measure: db_worker processes scaling out on a private PostgreSQL.
bench-scale: setup
	$(PY) tests/benchmarks/scale.py $(SCALE_ARGS)
	$(PY) tests/benchmarks/scale_workers.py $(WORKERS_ARGS)

bench-workers: setup
	$(PY) tests/benchmarks/scale_workers.py $(WORKERS_ARGS)
	$(PY) tests/benchmarks/payroll_fanout.py $(PAYROLL_ARGS)

# A private PostgreSQL server (or DATABASE_URL's), gunicorn and 2 run workers on loopback, under
# a mix of traffic for 60 s; LOAD_ARGS passes options (--duration, --authors, --clients, …).
# Issue 20's measurement adds open streams and an attacker, and exits 1 when a target is missed:
#   make load LOAD_ARGS="--duration 600 --streams 200 --attack"
load: setup
	$(PY) tests/load/run_load.py $(LOAD_ARGS)

# Outside make test: real gunicorn and db_worker processes against a private PostgreSQL cluster
# (initdb under a temporary folder, port GATEHOUSE_FAULTS_PG_PORT, default 55443), then broken.
faults: setup-dev
	GATEHOUSE_FAULTS=1 $(VENV)/bin/pytest -q tests/faults

# The fuzzers of make test with many more examples, randomly seeded; Hypothesis' example database
# is kept under var/fuzz/, and inputs found interesting are written into the corpora
# (tests/unit/cases/fuzz/, tests/integration/cases/api_fuzz/, tests/integration/cases/page_fuzz/)
# that make test replays.
FUZZ_EXAMPLES ?= 5000
FUZZ_API_EXAMPLES ?= 100
FUZZ_PAGE_EXAMPLES ?= 300
fuzz: setup-dev
	@mkdir -p -m 700 var && mkdir -p var/fuzz
	GATEHOUSE_FUZZ=1 GATEHOUSE_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) \
		GATEHOUSE_FUZZ_API_EXAMPLES=$(FUZZ_API_EXAMPLES) \
		GATEHOUSE_FUZZ_PAGE_EXAMPLES=$(FUZZ_PAGE_EXAMPLES) $(VENV)/bin/pytest -q \
		tests/unit/test_fuzz.py tests/unit/test_fuzz_corpus.py \
		tests/integration/test_api_schemathesis.py tests/integration/test_api_fuzz_corpus.py \
		tests/integration/test_page_fuzz.py tests/integration/test_page_fuzz_corpus.py

schema: setup-dev
	GATEHOUSE_UPDATE_SCHEMA=1 $(VENV)/bin/pytest -q tests/unit/test_schema.py
