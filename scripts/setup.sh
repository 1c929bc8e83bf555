#!/usr/bin/env bash
# Set up a working copy: a virtual environment in .venv with the project installed.
#   scripts/setup.sh          the app only
#   scripts/setup.sh test     the app, the test tools, and the system packages the tests
#                             drive for real (Chromium for Playwright, nginx for ingress)
set -euo pipefail
cd "$(dirname "$0")/.."

want=${1:-app}
python=${PYTHON:-python3}

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Memory Curator needs Python 3.11 or newer (found: $("$python" --version 2>&1))." >&2
  echo "On Debian/Ubuntu: sudo apt-get install -y python3 python3-venv" >&2
  exit 1
fi

if [ ! -x .venv/bin/python ]; then
  if ! "$python" -m venv .venv 2>/dev/null; then
    rm -rf .venv
    # Debian/Ubuntu ship venv separately; install it when we may.
    if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; }; then
      sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
      echo "Installing python3-venv (needed for .venv)" >&2
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
      "$python" -m venv .venv
    else
      echo "Cannot create a virtual environment: install python3-venv and try again." >&2
      exit 1
    fi
  fi
fi

stamp=.venv/.installed-$want
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  if [ "$want" = test ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
  else
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
  fi
  touch "$stamp"
fi

if [ "$want" = test ]; then
  missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
  # Chinese text in the browser tests' screenshots needs a CJK font.
  [ -d /usr/share/fonts/opentype/noto ] && ls /usr/share/fonts/opentype/noto/NotoSansCJK* >/dev/null 2>&1 || missing+=(fonts-noto-cjk)
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "Installing system packages for the browser and ingress tests: ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi
