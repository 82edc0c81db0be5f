#!/usr/bin/env bash
# Gradescope's setup: runs once, as root, when the autograder image is
# built, with the autograder zip (labctl release --gradescope FILE.zip: the
# student release, no solutions) unpacked in /autograder/source.
#
# - Installs gcc (for the race detector) and bubblewrap.
# - Finds a Go at least as recent as go.mod asks for, on PATH or in the
#   usual places, and uses it; only when there is none does it download one
#   into GO_ROOT (or, when GO_ROOT already holds an older Go, into
#   /autograder/go: an existing Go is never replaced). The Go chosen is
#   recorded in /autograder/go.env for run_autograder.
# - Creates STUDENT_USER, the unprivileged user the student's code runs as.
# - Builds labctl into /autograder/labctl and warms the build cache with
#   every lab's suite.
#
# Settings: GO_VERSION (the Go to download when none fits; default the
# go.mod's), GO_URL (where from), GO_ROOT (/usr/local/go), GO_SEARCH (the
# usual places a Go is looked for besides PATH and GO_ROOT), STUDENT_USER
# (labkit-student), AUTOGRADER_ROOT (/autograder; tests point these at
# stubs).
set -euo pipefail
ROOT=${AUTOGRADER_ROOT:-/autograder}
SRC=$ROOT/source
GO_ROOT=${GO_ROOT:-/usr/local/go}
STUDENT_USER=${STUDENT_USER:-labkit-student}
need=$(awk '$1 == "go" { print $2; exit }' "$SRC/go.mod")
GO_VERSION=${GO_VERSION:-$need}
GO_URL=${GO_URL:-https://go.dev/dl/go${GO_VERSION}.linux-amd64.tar.gz}
export DEBIAN_FRONTEND=noninteractive GOTOOLCHAIN=local

apt-get update -qq
apt-get install -y -qq ca-certificates curl gcc bubblewrap >/dev/null

# go_fits GO: GO runs and is at least version $need.
go_fits() {
  local v
  v=$(cd / && "$1" env GOVERSION 2>/dev/null) || return 1
  v=${v#go}
  v=${v%%[!0-9.]*}
  [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$need" "$v" | sort -V | head -n 1)" = "$need" ]
}

# The usual places, newest first within each pattern.
GO_SEARCH=${GO_SEARCH-$(ls -d /usr/local/go/bin/go /usr/lib/go/bin/go /usr/lib/go-*/bin/go /opt/go/bin/go \
  /snap/bin/go "${HOME:-/root}"/sdk/go*/bin/go "${HOME:-/root}"/go/bin/go 2>/dev/null | sort -rV)}
go_bin=
for candidate in "$(command -v go || true)" "$GO_ROOT/bin/go" $GO_SEARCH; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] && go_fits "$candidate"; then
    go_bin=$candidate
    echo "setup: using $("$candidate" version) at $candidate"
    break
  fi
done
if [ -z "$go_bin" ]; then
  dest=$GO_ROOT
  if [ -e "$dest" ]; then
    dest=$ROOT/go # GO_ROOT holds an older Go, which something else may use
  fi
  echo "setup: no Go $need or newer found; installing Go $GO_VERSION into $dest"
  tmp=$(mktemp -d)
  curl -fsSL "$GO_URL" -o "$tmp/go.tar.gz"
  tar -C "$tmp" -xzf "$tmp/go.tar.gz"
  mkdir -p "$(dirname "$dest")"
  mv "$tmp/go" "$dest"
  rm -rf "$tmp"
  go_bin=$dest/bin/go
fi
gobin_dir=$(dirname "$go_bin")
printf 'GO_BIN_DIR=%q\n' "$gobin_dir" >"$ROOT/go.env"
export PATH="$gobin_dir:$PATH"

if ! id -u "$STUDENT_USER" >/dev/null 2>&1; then
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$STUDENT_USER"
fi

cd "$SRC"
go mod download
go build -o "$ROOT/labctl" ./cmd/labctl
# Warm the build cache: every lab's test binary with the race detector, as
# the grader builds it (-trimpath), so that each submission only compiles
# its own package.
for lab in labs/[0-9]*/; do
  go test -c -trimpath -vet=off -race -o /dev/null "./$lab" >/dev/null 2>&1 || true
done
echo "setup done: $("$ROOT/labctl" help >/dev/null 2>&1 && echo labctl ready), kit $(cat "$SRC/LABKIT_VERSION" 2>/dev/null || echo "of unknown version")"
