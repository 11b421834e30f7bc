# Lookout: `make run` to start the app, `make test` to run every test. Both install what is missing.

PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
REFLEX := $(VENV)/bin/reflex
# The `bun` npm package ships the real binary; Reflex is pointed at it in rxconfig.py.
BUN    := .tools/node_modules/bun/bin/bun.exe
CHROMIUM := /usr/bin/chromium

# Reflex probes several npm registries and picks one; use the one npm is configured with instead.
export NPM_CONFIG_REGISTRY ?= $(shell npm config get registry 2>/dev/null)
export REFLEX_TELEMETRY_ENABLED := false

.PHONY: setup run prod test test-deps unit e2e clean

setup: $(VENV)/.installed $(BUN)

$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

# Reflex pins the bun version; read it from the installed Reflex so the two never drift.
$(BUN): | $(VENV)/.installed
	npm install --prefix .tools --no-save --no-package-lock --no-audit --no-fund \
	  "bun@$$($(PY) -c 'from reflex_base.constants import Bun; print(Bun.VERSION)')"
	$(BUN) --version
	touch $@

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

test: setup test-deps
	$(PY) -m pytest

unit: setup
	$(PY) -m pytest --ignore=tests/e2e

e2e: setup test-deps
	$(PY) -m pytest tests/e2e

clean:
	rm -rf $(VENV) .tools .web .states .data
