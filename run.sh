#!/usr/bin/env bash
# Set up the app and run it: ./run.sh [memory-curator arguments]
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh app
if [ $# -eq 0 ]; then
  set -- stats
fi
exec .venv/bin/memory-curator "$@"
