#!/usr/bin/env bash
# Speed figures for the closing notes. Nothing here is asserted: make test
# never times anything. Prints each suite's test time with -race, and labctl
# check's warm wall time next to a bare go test of the same code
# (.ci/bench-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
runs=${RUNS:-5}

mkdir -p bin
go build -o bin/labctl ./cmd/labctl

echo "== suite test time with -race (TestX elapsed reported by go test -json), $runs runs"
for dir in solutions/[0-9]*; do
  pkg=./$dir/
  times=()
  for _ in $(seq "$runs"); do
    t=$(go test -race -count=1 -json "$pkg" 2>/dev/null \
      | awk -F'"Elapsed":' '/"Action":"pass"/ && /"Test":"Test[A-Za-z]*"/ && !/"Test":"Test[A-Za-z]*\// {split($2,a,/[,}]/); print a[1]}' | head -1)
    times+=("${t:-?}")
  done
  echo "$dir: ${times[*]} s"
done

echo
echo "== model cases with -race (each case's elapsed time, $runs runs; the goal is under 1 s)"
for dir in solutions/[0-9]*; do
  out=$(for _ in $(seq "$runs"); do
    go test -race -count=1 -json -run '/(random_call_sequences_follow_the_rules|concurrent_calls_are_linearizable)$' "./$dir/" 2>/dev/null \
      | awk -F'"Test":"' '/"Action":"pass"/ && /"Elapsed":/ {split($2,n,/"/); split(n[1],c,"/"); if (c[2] != "") {split($0,e,/"Elapsed":/); split(e[2],v,/[,}]/); print c[2], v[1]}}'
  done | awk '{t[$1]=t[$1] " " $2} END {for (c in t) print c ":" t[c] " s"}' | sort)
  if [ -n "$out" ]; then
    echo "$dir:"
    echo "$out" | sed 's/^/  /'
  fi
done

echo
echo "== labctl: size, packages linked, cold build"
echo "size: $(stat -c %s bin/labctl) bytes; packages: $(go list -deps ./cmd/labctl | wc -l) (testing, miniredis or a suite among them: $(go list -deps ./cmd/labctl | grep -cE '^testing($|/)|miniredis|labkit/suites' || true))"
cold=$(mktemp -d)
start=$(date +%s.%N)
GOCACHE=$cold go build -o "$cold/labctl" ./cmd/labctl
echo "cold build of labctl (empty GOCACHE): $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
rm -rf "$cold"

echo
echo "== virtual time"
go test -count=1 -v -run TestHoursOfVirtualTimeTakeMilliseconds ./fakeclock/ | grep "of real time" | sed 's/^ *fakeclock_test.go:[0-9]*: //'

echo
bash .ci/bench-check.sh

if [ -f .ci/bench-grade.sh ]; then
  echo
  bash .ci/bench-grade.sh
fi

if [ -f .ci/bench-redis.sh ]; then
  echo
  bash .ci/bench-redis.sh
fi

if [ -f .ci/bench-watch.sh ]; then
  echo
  bash .ci/bench-watch.sh
fi

if [ -f .ci/bench-asynq.sh ]; then
  echo
  bash .ci/bench-asynq.sh
fi
