#!/usr/bin/env bash
# Installs the Debian packages a `make` target needs, only those missing. Nothing else is downloaded.
#   install-deps.sh build   what the dibs program and its libraries need to build (make demo)
#   install-deps.sh test    build's, plus the tests' servers and tools (make test, make sanitize)
#   install-deps.sh bench   test's, plus what the benches drive (make bench)
#   install-deps.sh fuzz    build's, plus clang and its libFuzzer runtime (make fuzz)
#   install-deps.sh --list NEED   prints the packages NEED would install on this machine, installing nothing
# Without an argument: test. Runs apt-get as root, or through sudo when not root.
set -euo pipefail

list_only=0
if [ "${1:-}" = --list ]; then list_only=1; shift; fi
need=${1:-test}

# The program: the compiler and build tools, and the libraries dibs links.
build=(
  g++ cmake ninja-build make pkg-config
  libboost1.81-dev libboost-url1.81-dev
  libsimdjson-dev libcli11-dev libssl-dev
  libmongoc-dev libbson-dev libmariadb-dev libpq-dev
  libgoogle-perftools-dev  # tcmalloc_minimal: the dibs program's allocator (CMakeLists.txt)
)
# The tests: the framework, and the real servers and tools they run against.
test=(
  catch2
  python3-mockupdb python3-mongomock  # the MongoDB-wire stand-in (tests/servers/mongo_standin.py)
  mariadb-server mariadb-client galera-4 rsync  # MariaDB and its Galera cluster (tests/servers/*_ctl.sh)
  postgresql  # the PostgreSQL test server (tests/servers/postgres_ctl.sh)
  python3-mysqldb python3-requests
  openssl  # the test MariaDB's TLS certificates (tests/servers/mariadb_ctl.sh)
  nodejs  # Node's http server at its defaults, as an API no one here wrote (tests/servers/node_api.js)
  nginx-light  # a reverse proxy no one here wrote, in front of the stub (tests/servers/nginx_ctl.sh)
  chromium chromium-driver python3-selenium  # the dashboard's test in a real browser (tests/browser/test_dashboard.py)
)
# The benches on top of the tests': their plots (gnuplot) and the HTTP ceiling (wrk). The peers
# (graphile-worker, pg-boss) come from npm into bench/peers, with the machine's own node and npm.
bench=(gnuplot-nox wrk)
fuzz=(clang libclang-rt-14-dev)

case "$need" in
  build) packages=("${build[@]}") ;;
  test) packages=("${build[@]}" "${test[@]}") ;;
  bench) packages=("${build[@]}" "${test[@]}" "${bench[@]}") ;;
  fuzz) packages=("${build[@]}" "${fuzz[@]}") ;;
  *) echo "usage: $0 [--list] build|test|bench|fuzz" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ $list_only = 1 ]; then
  [ ${#missing[@]} -eq 0 ] || printf '%s\n' "${missing[@]}"
  exit 0
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps ($need): installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
else
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
