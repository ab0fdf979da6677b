#!/usr/bin/env bash
# Installs the Debian packages dibs needs to build and test, only when missing.
# With the argument `fuzz`, also what `make fuzz` needs.
# Runs apt-get as root, or through sudo when not root. Nothing else is downloaded.
set -euo pipefail

packages=(
  g++ cmake ninja-build make pkg-config
  libboost1.81-dev libboost-url1.81-dev
  libsimdjson-dev catch2 libcli11-dev libssl-dev
  libmongoc-dev libbson-dev libmariadb-dev
  libgoogle-perftools-dev  # tcmalloc_minimal: the dibs program's allocator (CMakeLists.txt)
  python3-mockupdb python3-mongomock
  mariadb-server mariadb-client python3-mysqldb python3-requests gnuplot-nox
  openssl  # the test MariaDB's TLS certificates (tests/servers/mariadb_ctl.sh)
  nodejs  # Node's http server at its defaults, as an API no one here wrote (tests/servers/node_api.js)
  nginx-light  # a reverse proxy no one here wrote, in front of the stub (tests/servers/nginx_ctl.sh)
  libpq-dev postgresql  # the PostgreSQL store (libpq) and its test server (tests/servers/postgres_ctl.sh)
  chromium chromium-driver python3-selenium  # the dashboard's test in a real browser (tests/browser/test_dashboard.py)
)
# `install-deps.sh fuzz`: also clang and its libFuzzer runtime, for `make fuzz`.
if [ "${1:-}" = fuzz ]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
else
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
