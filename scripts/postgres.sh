#!/usr/bin/env bash
# A PostgreSQL 15 + pgvector server on loopback for the `postgres` test marker and
# `egomem bench store`. Idempotent: safe to run twice; a running server is reused.
#
#   bash scripts/postgres.sh            # prints the DSN on its last line
#   export EGOMEM_TEST_PG_DSN="$(bash scripts/postgres.sh | tail -n 1)"
#
# Runs as root (as on the developers' machines and in CI): installs Debian's
# postgresql-15, and pgvector as Debian's postgresql-15-pgvector where the release
# has it; Debian 12 (bookworm) does not, so there it builds Debian's own pgvector
# source package (from the next release, fetched with apt through a private list
# directory, the system's apt sources untouched) against postgresql-server-dev-15.
#
# Environment: EGOMEM_PG_PORT (55432), EGOMEM_PG_DIR (/tmp/egomem-pg), EGOMEM_PG_DB (egomem_test).
set -euo pipefail

PORT="${EGOMEM_PG_PORT:-55432}"
DIR="${EGOMEM_PG_DIR:-/tmp/egomem-pg}"
DB="${EGOMEM_PG_DB:-egomem_test}"
ROLE=egomem
PASS=egomem # a throwaway test server bound to 127.0.0.1 only
PGBIN=/usr/lib/postgresql/15/bin
EXT_CONTROL=/usr/share/postgresql/15/extension/vector.control

log() { echo "postgres.sh: $*" >&2; }
if [ "$(id -u)" -ne 0 ]; then
  log "must run as root (installs Debian packages and starts the server as user postgres)"
  exit 1
fi
apt_install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2; }
apt_updated=0
apt_update() { if [ "$apt_updated" -eq 0 ]; then apt-get update -qq >&2; apt_updated=1; fi; }

# 1. the server
if [ ! -x "$PGBIN/postgres" ]; then
  log "installing postgresql-15"
  apt_update
  apt_install postgresql-15 postgresql-client-15
fi

# 2. pgvector
if [ ! -f "$EXT_CONTROL" ]; then
  apt_update
  if apt-cache show postgresql-15-pgvector >/dev/null 2>&1; then
    log "installing postgresql-15-pgvector"
    apt_install postgresql-15-pgvector
  else
    log "postgresql-15-pgvector is not in this Debian release: building Debian's pgvector source package"
    apt_install postgresql-server-dev-15 build-essential dpkg-dev
    work=$(mktemp -d /tmp/egomem-pgvector.XXXXXX)
    mkdir -p "$work/lists/partial"
    echo "deb-src http://deb.debian.org/debian trixie main" >"$work/sources.list"
    aptopts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o "Dir::Etc::sourceparts=-"
      -o "Dir::State::Lists=$work/lists" -o "APT::Get::List-Cleanup=0")
    apt-get "${aptopts[@]}" update -qq >&2
    (cd "$work" && apt-get "${aptopts[@]}" source --download-only pgvector >&2 && dpkg-source -x ./*.dsc src >&2)
    make -C "$work/src" -s PG_CONFIG="$PGBIN/pg_config" OPTFLAGS="" >&2
    make -C "$work/src" -s PG_CONFIG="$PGBIN/pg_config" install >&2
    rm -rf "$work"
  fi
fi

# 3. a dedicated cluster in $DIR, owned by postgres, listening on loopback only
pg() { runuser -u postgres -- "$@"; }
if [ ! -f "$DIR/PG_VERSION" ]; then
  log "initialising a cluster in $DIR"
  mkdir -p "$DIR"
  chown postgres:postgres "$DIR"
  chmod 700 "$DIR"
  pg "$PGBIN/initdb" -D "$DIR" -U postgres --auth-local=peer --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  # synchronous_commit=off matches the SQLite store's synchronous=NORMAL: an OS crash may lose
  # the last few commits, never corrupts. The socket lives in the data dir (no /var/run needed).
  cat >>"$DIR/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR'
synchronous_commit = off
max_connections = 100
shared_buffers = 2GB
effective_cache_size = 8GB
maintenance_work_mem = 256MB
jit = off
EOF
fi
# shared_buffers: an HNSW search reads a few hundred to a few thousand index pages at random; the
# face index of 1M keys (m 32) is about 1 GB, and with the old 256MB most of those reads went through
# the OS page cache. A fleet's database should hold its identity index in shared_buffers. jit: the
# store's queries are short OLTP ones, where JIT compilation can only add latency. A cluster made
# before these lines gets them with ALTER SYSTEM (postgresql.auto.conf) and one restart, as below.
psql_conf() { runuser -u postgres -- "$PGBIN/psql" -h "$DIR" -p "$PORT" -U postgres -d postgres -qAt "$@"; }
if pg "$PGBIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1 && [ "$(psql_conf -c 'SHOW shared_buffers')" = 256MB ]; then
  log "raising shared_buffers to 2GB (restarts the server once)"
  psql_conf -c "ALTER SYSTEM SET shared_buffers = '2GB'" -c "ALTER SYSTEM SET effective_cache_size = '8GB'" \
    -c "ALTER SYSTEM SET jit = off"
  pg "$PGBIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w -t 60 restart -m fast >/dev/null
fi
if ! pg "$PGBIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
  log "starting the server on 127.0.0.1:$PORT"
  pg "$PGBIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w -t 60 start >/dev/null
fi

# 4. the role, the test database and the vector extension (each only if missing)
psql_su() { pg "$PGBIN/psql" -h "$DIR" -p "$PORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
if [ "$(psql_su -d postgres -c "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" != 1 ]; then
  psql_su -d postgres -c "CREATE ROLE $ROLE LOGIN PASSWORD '$PASS'"
fi
if [ "$(psql_su -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]; then
  psql_su -d postgres -c "CREATE DATABASE $DB OWNER $ROLE"
fi
psql_su -d "$DB" -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS vector"

echo "postgresql://$ROLE:$PASS@127.0.0.1:$PORT/$DB"
