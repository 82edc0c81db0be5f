#!/usr/bin/env bash
# labctl watch: how soon after a save the re-run starts and its result is
# shown (target: the re-run starts within a second). Measured, not asserted:
# TestWatchRerunLatency runs only with LABKIT_BENCH_WATCH=1.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== labctl watch: save to re-run (lab 01 starter, 3 saves)"
LABKIT_BENCH_WATCH=1 go test -count=1 -v -run '^TestWatchRerunLatency$' ./cmd/labctl/ \
  | grep 'watch: save' | sed 's/^ *watch_test.go:[0-9]*: //'
