#!/usr/bin/env bash
# Installs the Debian packages sgem-server needs, idempotently: only what is missing, through
# sudo when not root. `bootstrap.sh build` for building and running; `bootstrap.sh test` adds the
# browser-test tools and PostgreSQL (the throwaway server of scripts/pg-throwaway.sh);
# `bootstrap.sh bench` adds the load generator, the reference server and PostgreSQL (instances.sh).
set -euo pipefail

profile="${1:-build}"
packages=(libsqlite3-dev libssl-dev libpq-dev pkg-config sqlite3 openssl python3 tzdata)
case "$profile" in
  build) ;;
  test) packages+=(chromium chromium-driver python3-selenium curl faketime postgresql util-linux) ;;
  bench) packages+=(wrk nginx-light util-linux curl postgresql) ;;
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
  # The OpenAPI check validates with openapi-spec-validator and the API fuzz generates requests with
  # schemathesis, both from PyPI, into the python3 on PATH (the one the Makefile runs them with).
  [ "$profile" = test ] || return 0
  pip_install openapi-spec-validator openapi_spec_validator
  pip_install schemathesis schemathesis
  # The iCal feed check parses the feed with a real RFC 5545 parser.
  pip_install icalendar icalendar
  # The company feed's corpus is checked against the reference feed parser.
  pip_install feedparser feedparser
  # The push check decrypts pushes as a browser does (http_ece) and verifies VAPID (cryptography).
  pip_install http_ece http_ece
  pip_install cryptography cryptography
  # The browser tests' accessibility check (axe-core, bundled in the package) goes into the
  # python the browser tests run with: Debian's, next to its selenium (the Makefile's PYTHON).
  PIP_PYTHON="${BROWSER_PYTHON:-/usr/bin/python3}" pip_install axe-selenium-python axe_selenium_python
}

# pip_install PACKAGE MODULE: installs PACKAGE unless MODULE already imports (into $PIP_PYTHON,
# by default the python3 on PATH).
pip_install() {
  local py="${PIP_PYTHON:-python3}"
  "$py" -c "import $2" >/dev/null 2>&1 && return 0
  echo "bootstrap: installing $1 (PyPI)"
  "$py" -m pip install --quiet --disable-pip-version-check "$1" >/tmp/sgem-bootstrap-pip.log 2>&1 \
    || "$py" -m pip install --quiet --break-system-packages "$1" >>/tmp/sgem-bootstrap-pip.log 2>&1 \
    || { tail -5 /tmp/sgem-bootstrap-pip.log >&2; echo "bootstrap: pip install $1 failed" >&2; exit 1; }
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
