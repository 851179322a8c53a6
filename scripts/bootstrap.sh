#!/usr/bin/env bash
# Installs the Debian packages sgem-server needs, idempotently: only what is missing, through
# sudo when not root. `bootstrap.sh build` for building and running; `bootstrap.sh test` adds the
# browser-test tools; `bootstrap.sh bench` adds the load generator and the reference server.
set -euo pipefail

profile="${1:-build}"
packages=(libsqlite3-dev libssl-dev pkg-config sqlite3 openssl python3)
case "$profile" in
  build) ;;
  test) packages+=(chromium chromium-driver python3-selenium curl) ;;
  bench) packages+=(wrk nginx-light util-linux curl) ;;
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

install_python_tools() {
  # The OpenAPI check validates with openapi-spec-validator from PyPI, into the python3 on PATH.
  if [ "$profile" = test ] && ! python3 -c 'import openapi_spec_validator' >/dev/null 2>&1; then
    echo "bootstrap: installing openapi-spec-validator (PyPI)"
    python3 -m pip install --quiet --disable-pip-version-check openapi-spec-validator >/tmp/sgem-bootstrap-pip.log 2>&1 \
      || python3 -m pip install --quiet --break-system-packages openapi-spec-validator >>/tmp/sgem-bootstrap-pip.log 2>&1 \
      || { tail -5 /tmp/sgem-bootstrap-pip.log >&2; echo "bootstrap: pip install failed" >&2; exit 1; }
  fi
}

if [ ${#missing[@]} -eq 0 ]; then install_python_tools; exit 0; fi

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
install_python_tools
