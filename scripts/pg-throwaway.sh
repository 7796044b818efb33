#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the tests; source this file (scripts/test.sh does).
# Installs PostgreSQL from Debian's packages when it is missing (as root), runs the server as
# the unprivileged `postgres` user (created when missing) in a temporary directory on a free
# local port, exports FAILCODE_TEST_PG_URL, and stops the server and removes the directory
# when the calling shell exits. Without CI=true a server that cannot start only makes the
# PostgreSQL tests skip; with CI=true they fail (FAILCODE_TEST_PG_URL=unavailable).

failcode_pg_bindir() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && { echo "$dir"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

failcode_pg_start() {
  local bindir port
  if ! bindir="$(failcode_pg_bindir)"; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "test.sh: installing postgresql" >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >/dev/null
      apt-get install -y -qq --no-install-recommends postgresql >/dev/null
      bindir="$(failcode_pg_bindir)" || return 1
    else
      echo "test.sh: PostgreSQL is not installed" >&2
      return 1
    fi
  fi
  local user=postgres
  if [ "$(id -u)" -eq 0 ]; then
    id -u "$user" >/dev/null 2>&1 || useradd --system --no-create-home "$user" || return 1
  else
    user="$(id -un)"
  fi
  FAILCODE_PG_DIR="$(mktemp -d /tmp/failcode-pg.XXXXXX)"
  chmod 755 "$FAILCODE_PG_DIR"
  [ "$(id -u)" -eq 0 ] && chown "$user" "$FAILCODE_PG_DIR"
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
  local as=()
  [ "$(id -u)" -eq 0 ] && as=(runuser -u "$user" --)
  "${as[@]}" "$bindir/initdb" -D "$FAILCODE_PG_DIR/data" -U failcode --auth=trust \
    -E UTF8 --no-sync >"$FAILCODE_PG_DIR/initdb.log" 2>&1 || return 1
  "${as[@]}" "$bindir/pg_ctl" -D "$FAILCODE_PG_DIR/data" -l "$FAILCODE_PG_DIR/server.log" -w \
    -o "-p $port -k $FAILCODE_PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off \
        -c max_connections=60" start >/dev/null || return 1
  FAILCODE_PG_STOP=("${as[@]}" "$bindir/pg_ctl" -D "$FAILCODE_PG_DIR/data" -m immediate stop)
  export FAILCODE_TEST_PG_URL="postgresql://failcode@127.0.0.1:$port/postgres"
  echo "test.sh: PostgreSQL on 127.0.0.1:$port (data in $FAILCODE_PG_DIR)" >&2
}

failcode_pg_stop() {
  if [ -n "${FAILCODE_PG_DIR:-}" ]; then
    "${FAILCODE_PG_STOP[@]}" >/dev/null 2>&1 || true
    rm -rf "$FAILCODE_PG_DIR"
  fi
}

if [ -z "${FAILCODE_TEST_PG_URL:-}" ]; then
  trap failcode_pg_stop EXIT
  if ! failcode_pg_start; then
    echo "test.sh: PostgreSQL could not start; its tests skip (fail when CI=true)" >&2
    [ -n "${FAILCODE_PG_DIR:-}" ] && cat "$FAILCODE_PG_DIR"/*.log >&2 2>/dev/null
    export FAILCODE_TEST_PG_URL=unavailable
  fi
fi
