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

ROUNDS=${ROUNDS:-5}
CLIENTS=50
OPS=100000

die() {
  echo "bench-redis: $*" >&2
  exit 1
}

tag=bench-redis
. .ci/redis-lib.sh
start_private_redis

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
