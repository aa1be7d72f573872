#!/usr/bin/env bash
# Makes sure the PostgreSQL and MariaDB servers the integration tests use are up, starting them
# when they are down (as root on a machine that has them installed), then waits until they answer.
# Also installs Debian's chromium when missing (as root): the web console's browser tests drive it
# (test/console/console.test.ts skips them, saying so, when it is still absent); and faketime.
set -u
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium (the web console's browser tests)"
  apt_log=$(mktemp)
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >"$apt_log" 2>&1; then
    echo "chromium installed: $(/usr/bin/chromium --version 2>/dev/null)"
  else
    tail -n 20 "$apt_log" >&2
    echo "could not install chromium: the browser tests will be skipped" >&2
  fi
  rm -f "$apt_log"
fi
# And Debian's faketime (libfaketime) when missing: scripts/test.sh runs the suites that judge by the
# date once more with the clock moved years ahead (scripts/faketime-suite.sh).
if ! command -v faketime >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing faketime (the date guard of the suite)"
  apt_log=$(mktemp)
  if (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime; }) >"$apt_log" 2>&1; then
    echo "faketime installed"
  else
    tail -n 20 "$apt_log" >&2
    echo "could not install faketime: the date guard will fail" >&2
  fi
  rm -f "$apt_log"
fi
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
maria_up() { mysqladmin --protocol=tcp -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1 || mariadb-admin --protocol=tcp -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1; }

if ! pg_up && command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
  echo "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
fi
if ! maria_up && [ -x /usr/sbin/mariadbd ]; then
  echo "starting MariaDB"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
fi

for _ in $(seq 1 60); do
  if pg_up && maria_up; then exit 0; fi
  sleep 1
done
pg_up || echo "PostgreSQL on 127.0.0.1:5432 does not answer" >&2
maria_up || echo "MariaDB on 127.0.0.1:3306 does not answer" >&2
exit 1
