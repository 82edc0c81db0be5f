#!/usr/bin/env bash
# Gradescope's setup: runs once when the autograder image is built, as root,
# with the autograder zip (this kit) unpacked in /autograder/source. Installs
# Go, gcc (for the race detector) and bubblewrap, builds labctl into
# /autograder/labctl and warms the build cache with every lab's suite.
#
# Settings: GO_VERSION (default below), GO_URL (where the Go tarball comes
# from), AUTOGRADER_ROOT (/autograder), GO_ROOT (/usr/local/go); tests point
# them at stubs.
set -euo pipefail
ROOT=${AUTOGRADER_ROOT:-/autograder}
GO_VERSION=${GO_VERSION:-1.26.0}
GO_URL=${GO_URL:-https://go.dev/dl/go${GO_VERSION}.linux-amd64.tar.gz}
GO_ROOT=${GO_ROOT:-/usr/local/go}
export DEBIAN_FRONTEND=noninteractive

apt-get update -qq
apt-get install -y -qq ca-certificates curl gcc bubblewrap >/dev/null

if ! "$GO_ROOT/bin/go" version 2>/dev/null | grep -q "go${GO_VERSION}"; then
  tmp=$(mktemp -d)
  curl -fsSL "$GO_URL" -o "$tmp/go.tar.gz"
  rm -rf "$GO_ROOT"
  mkdir -p "$(dirname "$GO_ROOT")"
  tar -C "$tmp" -xzf "$tmp/go.tar.gz"
  mv "$tmp/go" "$GO_ROOT"
  rm -rf "$tmp"
fi
export PATH="$GO_ROOT/bin:$PATH"

cd "$ROOT/source"
go mod download
go build -o "$ROOT/labctl" ./cmd/labctl
# Warm the build cache: every lab's test binary with the race detector, as
# the grader builds it (-trimpath), so that each submission only compiles
# its own package.
for lab in labs/[0-9]*/; do
  go test -c -trimpath -vet=off -race -o /dev/null "./$lab" >/dev/null 2>&1 || true
done
echo "setup done: $("$ROOT/labctl" help >/dev/null 2>&1 && echo labctl ready)"
