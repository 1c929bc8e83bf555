#!/usr/bin/env bash
# Set up everything (virtualenv, test tools, Chromium, nginx) and run the whole test suite.
# Extra arguments go to pytest, e.g. ./test.sh -k memories
# The suite runs on up to 4 workers (pytest-xdist), one per core; PYTEST_WORKERS=1 runs it in
# one process (PYTEST_WORKERS=N for N).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh test
workers="${PYTEST_WORKERS:-$(nproc 2>/dev/null || echo 1)}"
if [ -z "${PYTEST_WORKERS:-}" ] && [ "$workers" -gt 4 ]; then workers=4; fi
if [ "$workers" -gt 1 ]; then
  exec .venv/bin/python -m pytest -n "$workers" "$@"
fi
exec .venv/bin/python -m pytest "$@"
