# Sourced by postgres_ctl.sh and postgres_pair_ctl.sh: the server's binaries, running them as the
# `postgres` user (PostgreSQL refuses root), and a free loopback port.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$pg_bin" ] || { echo "no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)" >&2; exit 1; }

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
