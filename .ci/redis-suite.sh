#!/usr/bin/env bash
# Runs every Redis-backed lab's suite (the labs the course registry marks as
# using Redis) against a real redis-server through labctl verify: each
# starter must fail for the right reason, each reference solution must pass,
# and every catalogued mistake must fail with a case of its own concept; then
# ops/'s tests (labctl engine's view of the engine). (The embedded-miniredis runs happen in
# `make test`; this is the other half of "CI does both".)
#
# It installs redis-server with apt-get when it is missing, starts a private
# server on a free loopback port (no persistence), and stops it on exit.
# Exit status: 0 all good; 1 a check failed or Redis could not be set up.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

die() {
  echo "redis-suite: $*" >&2
  exit 1
}

# --- a private redis-server -------------------------------------------------

tag=redis-suite
. .ci/redis-lib.sh
start_private_redis
echo "redis-suite: redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on $REDIS_ADDR"

# --- starter, solution and every catalogued mistake --------------------------

# With --redis and no lab named, labctl verify picks every lab that uses
# Redis from the registry, so a new Redis lab is covered without editing this.
if go run ./cmd/labctl verify --redis "$REDIS_ADDR"; then
  echo "redis-suite: starter, solution and all mistakes behave as catalogued against redis-server"
else
  echo "redis-suite: FAILED against redis-server $REDIS_ADDR"
  exit 1
fi

# --- the operator's view of the engine (ops/, a module of its own) ----------

# Its tests run every case on miniredis and, with REDIS_ADDR set, on this
# redis-server too: what the view reads and /metrics serves must match what
# the reference engine did on both.
if (cd ops && REDIS_ADDR="$REDIS_ADDR" go test -count=1 ./...); then
  echo "redis-suite: ops (labctl engine's view) reads the engine on miniredis and on redis-server"
else
  echo "redis-suite: ops FAILED against redis-server $REDIS_ADDR"
  exit 1
fi
