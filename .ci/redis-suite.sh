#!/usr/bin/env bash
# Runs lab 02's suite against a real redis-server through labctl verify: the
# starter must fail for the right reason, the reference solution must pass,
# and every catalogued mistake must fail with a case of its own concept. (The embedded-miniredis runs happen in
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

# labctl verify runs lab 02's pristine suite through the grader against the
# real server: the starter must fail for the right reason, the solution must
# pass, and every catalogued mistake must fail with its own concept named.
if go run ./cmd/labctl verify 2 --redis "$REDIS_ADDR"; then
  echo "redis-suite: starter, solution and all mistakes behave as catalogued against redis-server"
else
  echo "redis-suite: FAILED against redis-server $REDIS_ADDR"
  exit 1
fi
