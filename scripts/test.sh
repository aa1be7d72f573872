#!/usr/bin/env bash
# The whole test suite: every test file in parallel worker processes (each owns its stores and
# databases), then the worker's own tests one file at a time (they measure schedules and signals
# in real time and must not compete for the CPU). Exit non-zero if either part failed.
set -u
cd "$(dirname "$0")/.."
npx mocha "$@"
parallel=$?
npx mocha --config .mocharc.worker.json "$@"
serial=$?
if [ "$parallel" -ne 0 ] || [ "$serial" -ne 0 ]; then exit 1; fi
