#!/usr/bin/env bash
# The test suite on another day: `scripts/faketime-suite.sh 2031-01-01 [test.sh or mocha arguments]`.
#
# Every clock the tests see moves to that day (00:00 UTC) and runs on from there: Node's, through
# libfaketime (Debian's faketime), and the source databases', through a
# private PostgreSQL and MariaDB started under the same offset on spare loopback ports in a
# temporary folder (the machine's own servers are not touched; the PostgreSQL store stays on the
# machine's server, see below). A replica's clock and ours then agree, as they do in life, and a
# test that still fails reads the wall clock somewhere it should not.
#
# The offset is relative (`faketime -f +N`), not `@date`: with `@` every process would start at
# the same instant, so a subprocess's clock would run behind its parent's.
#
#   FAKETIME_ONLY="dist/test/commission/*.test.js ..."  run these test files with mocha (the
#   parallel settings) instead of the whole scripts/test.sh.
set -u
cd "$(dirname "$0")/.."
day=${1:?usage: scripts/faketime-suite.sh YYYY-MM-DD [arguments]}
shift
if ! [[ $day =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || ! date -u -d "${day}T00:00:00Z" +%s >/dev/null 2>&1; then
  echo "faketime-suite: the day must be YYYY-MM-DD, got $day" >&2
  exit 2
fi
# scripts/ensure-services.sh (npm test's pretest) installs it as root.
command -v faketime >/dev/null 2>&1 || { echo "faketime-suite: faketime is not installed (Debian package faketime; scripts/ensure-services.sh installs it as root)" >&2; exit 2; }

offset=$(( $(date -u -d "${day}T00:00:00Z" +%s) - $(date -u +%s) ))
sign=+
[ "$offset" -lt 0 ] && sign=
export FAKETIME_DONT_FAKE_MONOTONIC=1
ft=(faketime -f "${sign}${offset}")

# A port no socket of this machine holds, listening or not: a client connection's local port (the
# kernel's ephemeral range, 32768-60999 on Debian) blocks a server's bind as much as a listener does,
# so the ports are taken below that range and checked against every socket (ss), not only listeners.
port_taken() {
  if command -v ss >/dev/null 2>&1; then
    [ -n "$(ss -Htan "( sport = :$1 )" 2>/dev/null)" ]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}
free_port() {
  local p=$1
  while port_taken "$p"; do p=$((p + 1)); done
  echo "$p"
}

work=$(mktemp -d)
pg_port=$(free_port 25432)
maria_port=$(free_port 23306)
pgbin=/usr/lib/postgresql/$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)/bin
as_pg=()
[ "$(id -u)" = "0" ] && as_pg=(runuser -u postgres --)

cleanup() {
  [ -f "$work/pg/postmaster.pid" ] && "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1
  [ -f "$work/maria.pid" ] && kill "$(cat "$work/maria.pid")" 2>/dev/null && sleep 1
  rm -rf "$work"
}
trap cleanup EXIT

# PostgreSQL as the machine's server is set (UTC, trust on loopback), under the moved clock.
mkdir -p "$work/pg" "$work/pgsock"
[ "$(id -u)" = "0" ] && chown -R postgres "$work"
chmod 755 "$work"
"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg" -A trust -U postgres >"$work/initdb.log" 2>&1 || { cat "$work/initdb.log" >&2; exit 1; }
# The server itself in the background (pg_ctl -w under faketime waits on after the start).
"${as_pg[@]}" "${ft[@]}" "$pgbin/postgres" -D "$work/pg" -p "$pg_port" -k "$work/pgsock" \
  -c listen_addresses=127.0.0.1 -c TimeZone=UTC -c autovacuum=off -c max_connections=100 >"$work/pg.log" 2>&1 &
for _ in $(seq 1 60); do
  pg_isready -q -h 127.0.0.1 -p "$pg_port" && break
  sleep 0.5
done
psql -h 127.0.0.1 -p "$pg_port" -U postgres -qc 'CREATE DATABASE test' postgres >/dev/null || { cat "$work/pg.log" >&2; exit 1; }

# MariaDB: root without a password (no grant tables), utf8mb4 as on the machine's server.
mariadb-install-db --no-defaults --datadir="$work/maria" --user="$(id -un)" --auth-root-authentication-method=normal >"$work/maria-install.log" 2>&1 \
  || { cat "$work/maria-install.log" >&2; exit 1; }
"${ft[@]}" mariadbd --no-defaults --datadir="$work/maria" --port="$maria_port" --bind-address=127.0.0.1 --socket="$work/maria.sock" \
  --pid-file="$work/maria.pid" --user="$(id -un)" --skip-grant-tables --skip-name-resolve \
  --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci --max-connections=151 >"$work/maria.log" 2>&1 &
for _ in $(seq 1 60); do
  mariadb-admin --protocol=tcp -h 127.0.0.1 -P "$maria_port" -u root ping >/dev/null 2>&1 && break
  sleep 0.5
done
mariadb --protocol=tcp -h 127.0.0.1 -P "$maria_port" -u root -e 'CREATE DATABASE IF NOT EXISTS test' || { cat "$work/maria.log" >&2; exit 1; }

# The private PostgreSQL serves the sources (replicas, warehouses), whose clocks the tests compare
# with ours. The store stays on the machine's server: PostgreSQL's timers do not fire under
# libfaketime (its SIGALRM handler reads the real time), so a store there would never have a
# deadlock broken (deadlock_timeout) nor a statement cancelled; the store reads no server time.
export TEST_REPLICA_PG_URL="postgres://postgres@127.0.0.1:$pg_port/test"
export TEST_MYSQL_URL="mysql://root@127.0.0.1:$maria_port"
# The sources' statement_timeout does not fire there either (test/sql/warehouse.test.ts skips that one check).
export TEST_PG_FAKETIME=1
# scripts/test.sh leaves its date guard out under this script (the whole run is already moved).
export PARTNER_SYNC_FAKETIME_DAY=$day
echo "faketime-suite: the clock at $("${ft[@]}" date -u +%Y-%m-%dT%H:%M:%SZ) (offset ${sign}${offset} s); sources on PostgreSQL $pg_port and MariaDB $maria_port, both on that clock; the PostgreSQL store on the machine's server"
if [ -n "${FAKETIME_ONLY:-}" ]; then
  # shellcheck disable=SC2086
  "${ft[@]}" npx mocha --no-config --parallel --jobs 3 --timeout 30000 $FAKETIME_ONLY "$@"
else
  "${ft[@]}" bash scripts/test.sh "$@"
fi
