#!/usr/bin/env bash
# Build, or bring up to date, a Debian forky chroot with Home Assistant for tests/ha:
#   scripts/ha-root.sh DIR
# Home Assistant 2026.11 needs Python 3.14.2 or newer, which forky has. Idempotent: a step
# already done is skipped (a complete chroot costs a few seconds to check); it mounts /proc and
# binds /dev into DIR when they are not, and records the Python it got in DIR/.python-version.
# Installs the requirements of the integrations tests/ha loads (Home Assistant's defaults and
# mcp, ollama, conversation) with Home Assistant's own package_constraints.txt, so the test
# boots it with skip_pip. Needs root and the network; built from scratch it took 1.5 min of
# debootstrap and 2 min of pip here.
set -euo pipefail

dir=${1:?usage: scripts/ha-root.sh DIR}
HA_VERSION=2026.11.0
SUITE=forky
MIRROR=http://deb.debian.org/debian
INTEGRATIONS="mcp ollama conversation"
say() { echo "ha-root: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  echo "ha-root: building a chroot needs root." >&2
  exit 1
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
stamp=$dir/.memory-curator-ha
want="homeassistant==$HA_VERSION integrations=$INTEGRATIONS"

mounted() { grep -q " $1 " /proc/mounts; }
mount_all() {
  mounted "$dir/proc" || mount -t proc proc "$dir/proc"
  mounted "$dir/dev" || mount --bind /dev "$dir/dev"
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$dir/opt/ha/bin/python" ]; then
  mount_all
  exit 0
fi

started=$(date +%s)
if [ ! -x "$dir/usr/bin/python3" ]; then
  if ! command -v debootstrap >/dev/null 2>&1; then
    say "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  # forky's script is sid's (debootstrap may not know forky by name yet)
  script=/usr/share/debootstrap/scripts/$SUITE
  [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
  say "debootstrap $SUITE into $dir"
  debootstrap --variant=minbase \
    --include=python3,python3-venv,python3-dev,gcc,g++,ca-certificates \
    "$SUITE" "$dir" "$MIRROR" "$script" >"$dir.debootstrap.log" 2>&1 ||
    { tail -n 20 "$dir.debootstrap.log" >&2; exit 1; }
  rm -f "$dir.debootstrap.log"
fi
mount_all
cp /etc/resolv.conf "$dir/etc/resolv.conf"
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  mkdir -p "$dir/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/certs/ca-certificates.crt"
fi

in_root() { chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
if [ ! -x "$dir/opt/ha/bin/python" ]; then
  say "creating the virtual environment /opt/ha"
  in_root python3 -m venv /opt/ha
fi
if ! in_root /opt/ha/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('homeassistant') != '$HA_VERSION')" 2>/dev/null; then
  say "installing homeassistant==$HA_VERSION"
  in_root /opt/ha/bin/pip install --quiet --disable-pip-version-check "homeassistant==$HA_VERSION"
fi

# The requirements of every integration the test's boot loads (its defaults, and these with
# their dependencies), as their manifests pin them, that are not installed yet.
cat >"$dir/tmp/memory-curator-requirements.py" <<'EOF'
import importlib.metadata
import json
import sys
from pathlib import Path

import homeassistant.bootstrap as bootstrap

components = Path(bootstrap.__file__).parent / "components"
todo = [*sys.argv[1:], *bootstrap.CORE_INTEGRATIONS, *bootstrap.DEFAULT_INTEGRATIONS]
todo += [*bootstrap.LOGGING_AND_HTTP_DEPS_INTEGRATIONS, *bootstrap.FRONTEND_INTEGRATIONS]
todo += [domain for _, group, _ in bootstrap.STAGE_0_INTEGRATIONS for domain in group]
seen = set()
while todo:
    domain = todo.pop()
    manifest = components / domain / "manifest.json"
    if domain in seen or not manifest.exists():
        continue
    seen.add(domain)
    found = json.loads(manifest.read_text())
    todo += found.get("dependencies", []) + found.get("after_dependencies", [])
    for requirement in found.get("requirements", []):
        name, _, version = requirement.partition("==")
        try:
            if importlib.metadata.version(name) == version:
                continue
        except importlib.metadata.PackageNotFoundError:
            pass
        print(requirement)
EOF
# shellcheck disable=SC2086
missing=$(in_root /opt/ha/bin/python /tmp/memory-curator-requirements.py $INTEGRATIONS | sort -u)
rm -f "$dir/tmp/memory-curator-requirements.py"
if [ -n "$missing" ]; then
  say "installing the integrations' requirements: $(echo $missing)"
  constraints=$(in_root /opt/ha/bin/python -c "import homeassistant, pathlib; print(pathlib.Path(homeassistant.__file__).parent / 'package_constraints.txt')")
  # shellcheck disable=SC2086
  in_root /opt/ha/bin/pip install --quiet --disable-pip-version-check -c "$constraints" $missing
fi
in_root /opt/ha/bin/python --version >"$dir/.python-version"
echo "$want" >"$stamp"
say "ready in $(($(date +%s) - started)) s: $(cat "$dir/.python-version"), homeassistant $HA_VERSION in $dir"
