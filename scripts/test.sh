#!/usr/bin/env bash
# Install everything the tests need (a venv with the test extra, the npm test peers)
# and run the whole check: ruff, the import-linter contracts, mypy, pytest.
# Extra arguments go to pytest, e.g. `scripts/test.sh tests/config -x`.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

# npm peers: the MCP reference servers, the conformance suite, a real OAuth server, Node 22.
if command -v npm >/dev/null 2>&1; then
  (cd tests/peers && npm install --no-audit --no-fund --loglevel=error >/dev/null)
else
  echo "npm not found: tests marked 'npm' will be skipped" >&2
fi

export QT_QPA_PLATFORM=offscreen
# The run starts hundreds of interpreters (each `portico` command, each test server, each
# conformance client): with bytecode writing off, every one compiles Portico from source
# again, and each worker rewrites and compiles every test module (collection: 16 s of CPU
# instead of 4.5 s). __pycache__ is ignored by git.
unset PYTHONDONTWRITEBYTECODE
.venv/bin/ruff check desktop tests
.venv/bin/lint-imports
.venv/bin/mypy
# Three workers (pytest-xdist) on two cores: most tests wait on real servers and
# processes, so a third worker fills the time the other two spend waiting (2 cores:
# 407 s on two workers, 330 s on three; 268 s with the fork server of
# tests/helpers/warm.py, which runs the test servers and `portico` commands warm).
.venv/bin/python -m pytest -n "${PORTICO_TEST_WORKERS:-3}" --dist worksteal "$@"
