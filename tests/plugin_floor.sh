#!/usr/bin/env bash
# The plugin's own tests, on their own (plugin/pytest.ini: only the plugin and its `test` extra, no
# Lookout), against the oldest releases plugin/pyproject.toml allows: each dependency's `>=` bound
# installed exactly (reflex 0.9.11, sentry-sdk 2.56, ...), in a venv of their own (.tools/plugin-floor).
# `make test` runs it beside the others; the rest of the suite runs against requirements.txt's pins.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.tools/plugin-floor
floor=$(.venv/bin/python - <<'PY'
import tomllib
from packaging.requirements import Requirement

with open("plugin/pyproject.toml", "rb") as pyproject:
    for line in tomllib.load(pyproject)["project"]["dependencies"]:
        required = Requirement(line)
        lowest = [spec.version for spec in required.specifier if spec.operator == ">="]
        print(f"{required.name}=={lowest[0]}" if lowest else required.name)
PY
)
echo "plugin floor: $(echo $floor)"
test -x $venv/bin/python || python3.11 -m venv $venv
# uv as `make setup` uses it (pip when uv cannot install).
# shellcheck disable=SC2086
.venv/bin/uv pip install --quiet --python $venv/bin/python "./plugin[test]" pytest-xdist==3.8.0 $floor \
  || $venv/bin/python -m pip install --quiet --disable-pip-version-check "./plugin[test]" pytest-xdist==3.8.0 $floor
cd plugin && "../$venv/bin/python" -m pytest -q -n 2 -p no:cacheprovider tests
