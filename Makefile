# Lookout: `make run` to start the app, `make test` to run every test. Both install what is missing.

PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
REFLEX := $(VENV)/bin/reflex
# The `bun` npm package ships the real binary; Reflex is pointed at it in rxconfig.py.
BUN    := .tools/node_modules/bun/bin/bun.exe
# npm tools besides bun, pinned: sentry-cli gives each production chunk its debug ID
# (reflex_lookout/sourcemaps/build_step.py; its binary comes from the optional dependency @sentry/cli-linux-x64),
# esbuild is the "other bundler" of the source-map tests and benchmarks, raven is the legacy Node
# client of the /store/ tests (tests/ingest/test_endpoints_legacy.py), and Sentry's MCP server is the
# second real client of the web API's tests (tests/webapi/), and Spotlight's sidecar receives what the
# plugin relays to it (tests/e2e/test_spotlight.py). Its hono is held at 4.12.31: from 4.12.32 (hono#5161)
# `c.req.query()` has no prototype, and Spotlight 4.11.8 answers every request 500 (`query().toString`).
NPM_TOOLS := @sentry/cli@3.8.0 esbuild@0.28.2 raven@2.6.4 @sentry/mcp-server@0.39.0 @spotlightjs/spotlight@4.11.8 \
  hono@4.12.31
TOOLS_LIST := .tools/packages.txt
CHROMIUM := /usr/bin/chromium

# Reflex probes several npm registries and picks one; use the one npm is configured with instead.
export NPM_CONFIG_REGISTRY ?= $(shell npm config get registry 2>/dev/null)
export REFLEX_TELEMETRY_ENABLED := false

.PHONY: setup run prod test test-deps unit reliability e2e lint screenshots plugin-assets clean FORCE

setup: $(VENV)/.installed .tools/.installed

# uv installs the requirements: the same packages as pip (compared: `pip freeze`), in ~6 s instead of
# ~35 s of one core, the longest step before any test runs. Pinned here; if uv cannot be had or cannot
# reach the index it is configured with (uv reads its own settings, not pip's), pip does the install.
UV := uv==0.13.9
$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	($(PY) -m pip install --quiet --disable-pip-version-check $(UV) \
	  && $(VENV)/bin/uv pip install --quiet --python $(PY) --compile-bytecode -r requirements-dev.txt) \
	  || $(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

# The npm tools, listed with versions; rewritten only when the list changes (a newer Reflex pins
# another bun, or NPM_TOOLS was edited), which reinstalls them. Reflex pins the bun version; read it
# from the installed Reflex so the two never drift.
$(TOOLS_LIST): FORCE | $(VENV)/.installed
	@mkdir -p .tools
	@echo "bun@$$($(PY) -c 'from reflex_base.constants import Bun; print(Bun.VERSION)') $(NPM_TOOLS)" > $@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

# One install of all of them: `--no-save` removes whatever a run does not name. The sentry-cli binary
# comes from the registry (optional dependency), never from Sentry's CDN.
.tools/.installed: $(TOOLS_LIST)
	SENTRYCLI_SKIP_DOWNLOAD=1 npm install --prefix .tools --no-save --no-package-lock --no-audit --no-fund \
	  $$(cat $(TOOLS_LIST))
	$(BUN) --version
	.tools/node_modules/.bin/sentry-cli --version
	.tools/node_modules/.bin/esbuild --version
	touch $@

FORCE:

run: setup
	$(REFLEX) run

prod: setup
	$(REFLEX) run --env prod

# What the tests need besides Python packages, from Debian's packages: chromium for the browser
# tests, PostgreSQL and Redis servers (the tests start their own on loopback: tests/services.py),
# and iproute2's `ip` for the other machine the tests come from (a network namespace: tests/netns.py).
DEBIAN_TEST_PACKAGES := chromium postgresql redis-server iproute2
test-deps:
	test -x $(CHROMIUM) && ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && test -x /usr/bin/redis-server \
	  && test -x /usr/sbin/ip \
	  || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEBIAN_TEST_PACKAGES))

# `make test` runs six things at once (tests/side_by_side.sh): lint; the plugin's own tests alone
# against the oldest releases its pyproject.toml allows (tests/plugin_floor.sh); the browser tests in three
# processes, the hostile-client tests in two (each with the app's backend run from a copy of the project) and all
# the others (in order, sharing the app built here in .web/); and the unit and reliability tests
# together, in UNIT_WORKERS processes (pytest-xdist; `worksteal`: an idle process takes tests from a busy
# one). Much of their time is waiting (servers down, retries, receivers, an alert sender's pace), so more
# processes than cores pays; one pool for both keeps the machine's load what the browser tests stand.
# `make unit` leaves out tests/reliability (the pipeline under granian, loaded and faulted: half of the
# CPU), for fast feedback; `make reliability` runs those alone.
UNIT_WORKERS ?= 4
UNIT := $(PY) -m pytest -n $(UNIT_WORKERS) --dist worksteal --ignore=tests/e2e --ignore=tests/reliability
RELIABILITY := $(PY) -m pytest -n 2 --dist worksteal tests/reliability
UNIT_AND_RELIABILITY := $(PY) -m pytest -n $(UNIT_WORKERS) --dist worksteal --ignore=tests/e2e
HOSTILE := tests/e2e/test_hostile_clients.py
E2E := $(PY) -m pytest tests/e2e --ignore=$(HOSTILE)
# The hostile-client tests in two processes, each with an app of its own (a backend process is busy
# on one core while a client sends it every event handler): the longest (another machine, ~1 min 20 s
# alone) beside the two others (the DNS-rebinding site, ~1 min 15 s alone, and the trusted client,
# ~20 s: it stops once it has seen every marker).
HOSTILE_1 := another_machine or foreign-origin
E2E_HOSTILE_1 := $(PY) -m pytest $(HOSTILE) -k '$(HOSTILE_1)'
E2E_HOSTILE_2 := $(PY) -m pytest $(HOSTILE) -k 'not ($(HOSTILE_1))'
# Lint (ruff, with import order) and types (mypy), both configured in pyproject.toml.
LINT := $(VENV)/bin/ruff check && $(VENV)/bin/mypy
# Where what ran beside the unit tests writes its output (git-ignored).
OUTPUT := tests/e2e/logs

# The browser tests (Chromium, the app and their timeouts) keep the CPU's normal priority; what runs
# beside them is niced, so that a two-core machine busy with all of it still serves their pages in time.
NICE := nice -n 10
# A run starts ~80 Python processes that import the app (servers under test, their workers, clients,
# the CLIs): with PYTHONDONTWRITEBYTECODE set (this machine sets it) each compiled every module again,
# ~0.45 s of CPU per process; the tests let Python keep the compiled modules (in __pycache__/, ignored by git).
KEEP_BYTECODE := env -u PYTHONDONTWRITEBYTECODE
test: setup test-deps
	@$(KEEP_BYTECODE) bash tests/side_by_side.sh $(OUTPUT) "lint=$(NICE) $(VENV)/bin/ruff check && $(NICE) $(VENV)/bin/mypy" "browser=$(E2E)" "hostile-1=$(NICE) $(E2E_HOSTILE_1)" \
	  "hostile-2=$(NICE) $(E2E_HOSTILE_2)" "plugin-floor=$(NICE) bash tests/plugin_floor.sh" "unit=$(NICE) $(UNIT_AND_RELIABILITY)"

unit: setup
	$(KEEP_BYTECODE) $(UNIT)

reliability: setup test-deps
	$(KEEP_BYTECODE) $(RELIABILITY)

e2e: setup test-deps
	@$(KEEP_BYTECODE) bash tests/side_by_side.sh $(OUTPUT) "hostile-1=$(E2E_HOSTILE_1)" "hostile-2=$(E2E_HOSTILE_2)" "browser=$(E2E)"

# The docs' screenshots (docs/images/), from the real app in Chromium: tests/e2e/screenshots.py.
# The plugin's minified loader (plugin/src/reflex_lookout/js/loader.min.js), after an edit of loader.js.
plugin-assets: setup
	$(PY) -m app.plugin_assets

screenshots: setup test-deps
	$(PY) -m tests.e2e.screenshots docs/images

lint: setup
	$(LINT)

clean:
	rm -rf $(VENV) .tools .web .states .data
