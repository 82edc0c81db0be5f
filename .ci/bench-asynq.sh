#!/usr/bin/env bash
# Runs the reference lab-10 engine and asynq side by side on a private
# redis-server (ops/cmd/enginebench): a fixed number of no-op jobs, N
# workers each, 5 interleaved runs, and prints jobs per second, p50/p99
# submit-to-done latency and Redis commands per job (medians) with the
# engine/asynq ratios (the goal is at least 1.0x throughput). Measured,
# never asserted: the machine may be busy with other work.
#
# Skips (exit 0) when redis-server is not installed. Exit status: 0
# measured or skipped; 1 Redis could not be set up or the bench failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

RUNS=${RUNS:-5}
JOBS=${JOBS:-2000}
WORKERS=${WORKERS:-8}

die() {
  echo "bench-asynq: $*" >&2
  exit 1
}

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1 || ! command -v redis-benchmark >/dev/null 2>&1; then
  echo "bench-asynq: skipped: redis-server (and redis-tools) not installed"
  exit 0
fi

tag=bench-asynq
. .ci/redis-lib.sh
start_private_redis

echo "bench-asynq: engine vs asynq on a private redis-server 127.0.0.1:$port, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
go -C ops run ./cmd/enginebench --redis "127.0.0.1:$port" --jobs "$JOBS" --workers "$WORKERS" --runs "$RUNS" || die "enginebench failed"
