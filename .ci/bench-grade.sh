#!/usr/bin/env bash
# Speed of class grading: the hostile class (every lab) with --jobs 1 and
# with the default, seconds per submission-lab, next to bare
# go test -race -count=1 runs of each lab's solution. Reported, not asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
ms() { echo $(( $(date +%s%N) / 1000000 )); }

echo "== bare go test -race -count=1 of each solution (warm), wall time"
total=0; n=0
for dir in solutions/[0-9]*/; do
  go test -race -count=1 "./$dir" >/dev/null 2>&1 || true
  s=$(ms); go test -race -count=1 "./$dir" >/dev/null 2>&1 || true; e=$(ms)
  echo "$dir: $((e - s)) ms"; total=$((total + e - s)); n=$((n + 1))
done
bare_ms=$((total / n))
echo "mean bare run: $bare_ms ms"

for jobs in 1 ""; do
  echo
  echo "== hostile class, --jobs ${jobs:-default}"
  line=$(LABKIT_CLASS=1 LABKIT_CLASS_JOBS=$jobs go test -count=1 -timeout 30m -run '^TestHostileClass$' -v ./cmd/labctl/ 2>&1 | grep 'per submission-lab' || true)
  echo "${line# *}"
  per=$(echo "$line" | sed -n 's/.*: \([0-9.]*\)s per submission-lab.*/\1/p')
  if [ -n "$per" ]; then
    echo "ratio to a bare go test run: $(awk "BEGIN{printf \"%.2f\", $per*1000/$bare_ms}")"
  fi
done

echo
echo "== what the sandbox costs: each lab's solution graded with --force, --sandbox off vs bwrap, --jobs 1"
class=$(mktemp -d)
trap 'rm -rf "$class"' EXIT
for dir in solutions/[0-9]*/; do
  lab=$(basename "$dir")
  mkdir -p "$class/sub/sol-$lab/labs/$lab"
  cp "$dir"*.go "$class/sub/sol-$lab/labs/$lab/"
  rm -f "$class/sub/sol-$lab/labs/$lab/"*_test.go
done
go build -o bin/labctl ./cmd/labctl
bin/labctl grade "$class/sub" --out "$class/warm" --jobs 1 >/dev/null 2>&1 || true
for sb in off bwrap; do
  s=$(ms); bin/labctl grade "$class/sub" --out "$class/out-$sb" --jobs 1 --force --sandbox "$sb" >/dev/null 2>&1 || true; e=$(ms)
  echo "--sandbox $sb: $((e - s)) ms"
done
