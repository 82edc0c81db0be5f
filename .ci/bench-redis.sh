#!/usr/bin/env bash
# Measures the claim throughput of lab 02's reference store against a real
# redis-server, next to redis-benchmark's raw SET rate on the same server,
# both with 50 concurrent clients, and prints the ratio (target >= 0.7).
#
# Each claim on a new key is one SET ... NX PX round trip, so the ratio is
# the share of the server's plain SET rate that the store achieves through
# go-redis and its own code. The two are measured in alternating rounds (the
# machine may be busy with other work) and the medians are reported.
#
# Exit status: 0 measured (whatever the ratio); 1 Redis could not be set up
# or a measurement failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
export DEBIAN_FRONTEND=noninteractive

ROUNDS=${ROUNDS:-5}
CLIENTS=50
OPS=100000

die() {
  echo "bench-redis: $*" >&2
  exit 1
}

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-benchmark >/dev/null 2>&1; then
  echo "bench-redis: installing redis-server and redis-tools with apt-get"
  if ! { apt-get update -qq && apt-get install -y -qq redis-server redis-tools; } >/tmp/labkit-redis-apt.log 2>&1; then
    die "cannot install redis-server with apt-get (log: /tmp/labkit-redis-apt.log)"
  fi
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=
for p in 6390 6391 6392 6393 6394 6395 6396 6397 6398 6399; do
  if ! port_in_use "$p"; then port=$p; break; fi
done
[ -n "$port" ] || die "no free port in 6390-6399 on 127.0.0.1 for a private redis-server"

workdir=$(mktemp -d /tmp/labkit-bench.XXXXXX)
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
[ -n "$ready" ] || die "redis-server on 127.0.0.1:$port did not answer PING within 10s"

go build -o "$workdir/claimbench" ./solutions/02-redis/internal/claimbench || die "cannot build the claim benchmark"

echo "bench-redis: redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on 127.0.0.1:$port, $CLIENTS clients, $OPS operations, $ROUNDS rounds, $(nproc) cores"
store=()
raw=()
for round in $(seq "$ROUNDS"); do
  line=$("$workdir/claimbench" -addr "127.0.0.1:$port" -clients "$CLIENTS" -n "$OPS") || die "claimbench failed: $line"
  s=$(echo "$line" | awk '{print $2}')
  line=$(redis-benchmark -h 127.0.0.1 -p "$port" -t set -c "$CLIENTS" -n "$OPS" -q 2>/dev/null | tr '\r' '\n' | grep '^SET:' | tail -n 1)
  r=$(echo "$line" | awk '{print $2}')
  [ -n "$s" ] && [ -n "$r" ] || die "round $round: could not read the figures"
  printf '  round %d: store claims %8.0f/s   redis-benchmark SET %8.0f/s   ratio %.2f\n' "$round" "$s" "$r" "$(echo "$s $r" | awk '{print $1 / $2}')"
  store+=("$s")
  raw+=("$r")
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ms=$(median "${store[@]}")
mr=$(median "${raw[@]}")
ratio=$(echo "$ms $mr" | awk '{printf "%.2f", $1 / $2}')
printf 'bench-redis: store claims %.0f/s, redis-benchmark SET %.0f/s (medians): ratio %s (target >= 0.7)\n' "$ms" "$mr" "$ratio"
if awk -v r="$ratio" 'BEGIN { exit !(r < 0.7) }'; then
  echo "bench-redis: below target; on a busy or 2-core machine the Go client and redis-server compete for the same cores"
fi
