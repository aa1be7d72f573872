#!/usr/bin/env bash
# The whole test suite: every test file in parallel worker processes (each owns its stores and
# databases), then the worker's own tests one file at a time (they measure schedules and signals
# in real time and must not compete for the CPU), then the date guard: the suites that judge by
# the date (commissions, reports, the console, the process clock) once more with every clock moved
# to 2031 (scripts/faketime-suite.sh), so that a test or a command reading the machine's clock
# instead of the injected one fails now, not on the day the calendar reaches it. Arguments go to
# mocha and leave the date guard out, as does a run inside scripts/faketime-suite.sh. Exit non-zero if any part failed.
set -u
cd "$(dirname "$0")/.."
npx mocha "$@"
parallel=$?
npx mocha --config .mocharc.worker.json "$@"
serial=$?
dated=0
# Not again inside scripts/faketime-suite.sh, which runs this whole file on its own moved clock.
if [ "$#" -eq 0 ] && [ -z "${PARTNER_SYNC_FAKETIME_DAY:-}" ]; then
  FAKETIME_ONLY="dist/test/commission/*.test.js dist/test/reports/*.test.js dist/test/console/*.test.js dist/test/cli/commissions.test.js dist/test/kernel/clock.test.js" \
    bash scripts/faketime-suite.sh 2031-01-01
  dated=$?
fi
if [ "$parallel" -ne 0 ] || [ "$serial" -ne 0 ] || [ "$dated" -ne 0 ]; then exit 1; fi
