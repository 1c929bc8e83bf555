#!/usr/bin/env bash
# Set up everything (virtualenv, test tools, Chromium, nginx) and run the whole test suite.
# Extra arguments go to pytest, e.g. ./test.sh -k memories
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh test
exec .venv/bin/python -m pytest "$@"
