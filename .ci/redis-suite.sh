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
export DEBIAN_FRONTEND=noninteractive

die() {
  echo "redis-suite: $*" >&2
  exit 1
}

# --- a private redis-server -------------------------------------------------

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  echo "redis-suite: installing redis-server with apt-get"
  if ! { apt-get update -qq && apt-get install -y -qq redis-server redis-tools; } >/tmp/labkit-redis-apt.log 2>&1; then
    die "cannot install redis-server with apt-get (log: /tmp/labkit-redis-apt.log)"
  fi
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=
for p in ${REDIS_SUITE_PORT:-} 6390 6391 6392 6393 6394 6395 6396 6397 6398 6399; do
  if ! port_in_use "$p"; then port=$p; break; fi
done
[ -n "$port" ] || die "no free port in 6390-6399 on 127.0.0.1 for a private redis-server"

workdir=$(mktemp -d /tmp/labkit-redis.XXXXXX)
stop_redis() {
  local pid
  pid=$(cat "$workdir/redis.pid" 2>/dev/null)
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -rf "$workdir"
}
trap stop_redis EXIT

redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
  --daemonize yes --pidfile "$workdir/redis.pid" --logfile "$workdir/redis.log" \
  --dir "$workdir" >/dev/null 2>&1 || die "cannot start redis-server on 127.0.0.1:$port"
ready=
for _ in $(seq 100); do
  if [ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = PONG ]; then ready=1; break; fi
  sleep 0.1
done
[ -n "$ready" ] || die "redis-server on 127.0.0.1:$port did not answer PING within 10s ($(tail -n 3 "$workdir/redis.log" 2>/dev/null | tr '\n' ' '))"
export REDIS_ADDR=127.0.0.1:$port
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
