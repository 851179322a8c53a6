#!/usr/bin/env bash
# Installs the Debian packages sgem-server needs, idempotently: only what is missing, through
# sudo when not root. `bootstrap.sh build` for building and running; `bootstrap.sh test` adds the
# browser-test tools; `bootstrap.sh bench` adds the load generator and the reference server.
set -euo pipefail

profile="${1:-build}"
packages=(libsqlite3-dev libssl-dev pkg-config sqlite3 openssl python3)
case "$profile" in
  build) ;;
  test) packages+=(chromium chromium-driver python3-selenium) ;;
  bench) packages+=(wrk nginx-light hyperfine util-linux) ;;
  *) echo "usage: $0 [build|test|bench]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
  echo "note: swift is at /opt/swift/usr/bin; add it to PATH" >&2
fi

[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "bootstrap: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet; refresh once if a package is unknown.
if ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/sgem-bootstrap.log 2>&1; then
  $sudo apt-get update -qq >>/tmp/sgem-bootstrap.log 2>&1
  if ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/sgem-bootstrap.log 2>&1; then
    tail -20 /tmp/sgem-bootstrap.log >&2
    echo "bootstrap: apt-get install failed (log: /tmp/sgem-bootstrap.log)" >&2
    exit 1
  fi
fi
