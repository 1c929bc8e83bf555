#!/usr/bin/env bash
# Set up a working copy: a virtual environment in .venv with the project installed.
#   scripts/setup.sh          the app only
#   scripts/setup.sh test     the app, the test tools, and the system packages the tests
#                             drive for real (Chromium for Playwright, nginx for ingress)
# Installs with uv (from PyPI, into .venv) where it can, pip otherwise; says what it does in a
# few lines on stderr and is silent when everything is in place already.
# SETUP_INSTALLER=pip forces pip.
set -euo pipefail
cd "$(dirname "$0")/.."

want=${1:-app}
python=${PYTHON:-python3}
say() { echo "memory-curator: $*" >&2; }

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Memory Curator needs Python 3.11 or newer (found: $("$python" --version 2>&1))." >&2
  echo "On Debian/Ubuntu: sudo apt-get install -y python3 python3-venv" >&2
  exit 1
fi

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    return 1
  fi
}

if [ ! -x .venv/bin/python ]; then
  say "creating the virtual environment in .venv"
  # Without pip: uv installs it (in a fraction of the time ensurepip takes); ensure_pip adds it
  # the standard way when pip does the installing.
  if ! "$python" -m venv --without-pip .venv 2>/dev/null; then
    rm -rf .venv
    # Debian/Ubuntu ship venv separately; install it when we may.
    if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; }; then
      say "installing python3-venv (needed for .venv)"
      as_root apt-get update -qq
      DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq python3-venv >/dev/null
      "$python" -m venv --without-pip .venv
    else
      echo "Cannot create a virtual environment: install python3-venv and try again." >&2
      exit 1
    fi
  fi
fi

# Installers' output goes to a log that is shown only when the install fails.
log=.venv/setup.log
ensure_pip() {
  .venv/bin/python -m pip --version >/dev/null 2>&1 ||
    .venv/bin/python -m ensurepip --default-pip >"$log" 2>&1 || { cat "$log" >&2; return 1; }
}
pip_quiet() {
  ensure_pip || return 1
  if ! .venv/bin/python -m pip install --quiet --disable-pip-version-check "$@" >"$log" 2>&1; then
    cat "$log" >&2
    return 1
  fi
}

# The installer: uv resolves and installs in parallel, many times faster than pip. It is
# used from PATH when there, else fetched from PyPI (one wheel) into .venv/uv-tool by the
# system's pip, or by the environment's own; pip stays the fallback when uv cannot be had.
uv=""
if [ "${SETUP_INSTALLER:-}" != pip ]; then
  for candidate in "$(command -v uv 2>/dev/null || true)" .venv/uv-tool/bin/uv .venv/bin/uv; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      uv=$candidate
      break
    fi
  done
  if [ -z "$uv" ]; then
    if "$python" -m pip install --quiet --disable-pip-version-check --target .venv/uv-tool \
      "uv>=0.5,<1" >"$log" 2>&1 && [ -x .venv/uv-tool/bin/uv ]; then
      uv=.venv/uv-tool/bin/uv
    elif pip_quiet "uv>=0.5,<1" 2>/dev/null && [ -x .venv/bin/uv ]; then
      uv=.venv/bin/uv
    fi
  fi
fi
installer=pip
[ -n "$uv" ] && installer=uv

install() {
  if [ "$installer" = uv ]; then
    # pip too, so the environment has it (the tests build a wheel with it)
    if "$uv" pip install --quiet --python .venv/bin/python pip "$@" >"$log" 2>&1; then
      return 0
    fi
    say "uv could not install ($(tail -n 1 "$log")); trying pip"
    installer=pip
  fi
  pip_quiet "$@"
}

stamp=.venv/.installed-$want
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  started=$(date +%s)
  if [ "$want" = test ]; then
    say "installing Memory Curator, its dependencies and the test tools into .venv (with $installer)"
    install -e ".[test]"
  else
    say "installing Memory Curator and its dependencies into .venv (with $installer)"
    install -e .
  fi
  touch "$stamp"
  say "installed in $(($(date +%s) - started)) s"
fi

if [ "$want" = test ]; then
  missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
  # Chinese text in the browser tests' screenshots needs a CJK font.
  [ -d /usr/share/fonts/opentype/noto ] && ls /usr/share/fonts/opentype/noto/NotoSansCJK* >/dev/null 2>&1 || missing+=(fonts-noto-cjk)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing system packages for the browser and ingress tests: ${missing[*]}"
    if ! { as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      as_root apt-get install -y -qq "${missing[@]}"; } >"$log" 2>&1; then
      cat "$log" >&2
      exit 1
    fi
  fi
fi

# The real Home Assistant the tests in tests/ha drive: a Debian forky chroot (Home Assistant
# 2026.11 needs Python 3.14.2 or newer) in MEMORY_HA_ROOT, built once and reused (it took
# debootstrap 1.5 min and pip 2 min here). Needs root; scripts/ha-root.sh says what it does.
if [ "$want" = test ]; then
  ha_root=${MEMORY_HA_ROOT:-/var/cache/memory-curator/ha-root}
  if [ "$(id -u)" -eq 0 ]; then
    scripts/ha-root.sh "$ha_root"
  elif [ ! -f "$ha_root/.memory-curator-ha" ]; then
    say "no Home Assistant chroot in $ha_root: run sudo scripts/ha-root.sh $ha_root (tests/ha need it)"
  fi
fi
