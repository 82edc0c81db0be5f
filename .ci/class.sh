#!/usr/bin/env bash
# CI: grades the hostile class (LABKIT_CLASS=1 TestHostileClass) under the
# bubblewrap sandbox: 35 submissions over every lab, each score checked, the
# kit checkout unchanged afterwards. Its own step, since it takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
if ! bwrap --unshare-all --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 -- /usr/bin/true 2>/dev/null; then
  echo "class.sh: bubblewrap cannot create a sandbox here; grading the class without it" >&2
fi
LABKIT_CLASS=1 go test -count=1 -timeout 30m -run '^TestHostileClass$' -v ./cmd/labctl/ | grep -E '^(=== RUN|--- |ok|FAIL|PASS)|class_test.go'
