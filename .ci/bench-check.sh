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

echo
echo "== a fresh clone's first check: go run ./cmd/labctl check 1 with an empty GOCACHE (go run's own build included)"
cold=$(mktemp -d)
clone=$(mktemp -d)
tar --exclude=./.git --exclude=./.labkit --exclude=./bin -cf - . | tar -C "$clone" -xf -
s=$(ms)
first=$( (cd "$clone" && GOCACHE=$cold go run ./cmd/labctl check 1 --quiet 2>&1 | grep -m1 -oE '[0-9]+/[0-9]+' ) || true)
e=$(ms)
echo "first verdict ($first) after $(( (e - s) / 1000 )) s (the race-enabled standard library builds in the background after it)"
pkill -f -- "-run \\^\\$ ./suites/claimsuite/" 2>/dev/null || true   # the background build, whose cache goes
sleep 1
rm -rf "$cold" "$clone"
