#!/usr/bin/env bash
# Warm labctl check against a bare go test -race -count=1 of the same code:
# the reference solution of labs 01, 02 and 05, put in labs/ of a scratch
# copy of the kit (check grades labs/NN-name/). RUNS runs each (default 5),
# the median wall time of each and their ratio. Measured, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
runs=${RUNS:-5}
labs=${BENCH_LABS:-"01-claim 02-redis 05-lease"}

mkdir -p bin
go build -o bin/labctl ./cmd/labctl
labctl=$PWD/bin/labctl
kit=$(mktemp -d)
trap 'rm -rf "$kit"' EXIT
tar --exclude=./.git --exclude=./.labkit --exclude=./bin -cf - . | tar -C "$kit" -xf -

ms() { echo $(( $(date +%s%N) / 1000000 )); }
# median of the arguments
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }

echo "== warm labctl check vs bare go test -race -count=1, the solution in labs/, median of $runs runs (ms)"
printf '%-12s %10s %10s %7s\n' lab "go test" check ratio
for lab in $labs; do
  cp "solutions/$lab"/*.go "$kit/labs/$lab/"
  n=${lab%%-*}
  (cd "$kit" && go test -race -count=1 "./labs/$lab/" >/dev/null 2>&1) || true   # warm the build cache
  (cd "$kit" && "$labctl" check "$n" --quiet >/dev/null 2>&1) || true             # and the cached test binary
  bare=(); check=()
  for _ in $(seq "$runs"); do
    s=$(ms); (cd "$kit" && go test -race -count=1 "./labs/$lab/" >/dev/null 2>&1) || true; e=$(ms); bare+=($((e - s)))
    s=$(ms); (cd "$kit" && "$labctl" check "$n" --quiet >/dev/null 2>&1) || true; e=$(ms); check+=($((e - s)))
  done
  b=$(median "${bare[@]}"); c=$(median "${check[@]}")
  printf '%-12s %10s %10s %7s\n' "$lab" "$b" "$c" "$(awk "BEGIN{printf \"%.2f\", $c/$b}")"
done
