#!/usr/bin/env bash
# Set up the app and run the dashboard on http://127.0.0.1:8099/ over ./data.
# Arguments replace the default command: ./run.sh serve --demo, ./run.sh stats, ...
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh app
if [ $# -eq 0 ]; then
  set -- serve
fi
exec .venv/bin/memory-curator "$@"
