# Sourced by postgres_ctl.sh and postgres_pair_ctl.sh: the server's binaries, running them as the
# `postgres` user (PostgreSQL refuses root), a free loopback port and a private home for a server.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$pg_bin" ] || { echo "no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)" >&2; exit 1; }

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A port below the kernel's range for outgoing connections, reserved against the other starts.
free_port() { /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/free_port.py"; }

# A fresh, empty home for one server (its data, socket and temporary files: nothing in /tmp is
# shared with another server), owned by the user the server runs as: DIR/NAME-home when that user
# can reach DIR, else a private mktemp folder (a build tree under a home directory may be out of
# the `postgres` user's reach). Prints its path.
pg_private_home() {
  local dir=$1 name=$2 home
  if as_pg test -x "$dir" 2>/dev/null; then
    home="$dir/$name-home"
    rm -rf "$home"
    mkdir -p "$home"
  else
    home=$(mktemp -d "/tmp/dibs-$name.XXXXXX")
  fi
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$home"; fi
  echo "$home"
}
