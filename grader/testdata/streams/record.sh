#!/usr/bin/env bash
# record.sh writes the real `go test -json` streams that TestRecordedStreams
# parses: lab 01's suite run as the grader runs it (-race, signed with the
# key in ./key), on the solution, on two catalogued mistakes, on the
# starter and on a submission that does not compile, each in labs/01-claim
# of a scratch worktree, so paths are the ones a learner's run prints.
# Run from the kit root after changing lab 01's suite, then run
# go test ./grader -run TestRecordedStreams -update-streams.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
out=$root/grader/testdata/streams
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/kit" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add --detach -q "$tmp/kit" HEAD
# The working tree's suites, attest and rubric, so uncommitted suite changes are recorded.
for d in suites attest rubric; do rm -rf "$tmp/kit/$d" && cp -r "$root/$d" "$tmp/kit/$d"; done
lab=$tmp/kit/labs/01-claim

record() { # record NAME: run the suite in $lab, signed, into $out/NAME.json
	printf 'recorded-stream-key' >"$tmp/key"
	(cd "$tmp/kit" && LABKIT_ATTEST_FILE=$tmp/key LABKIT_SEED=1 go test -json -race -count=1 ./labs/01-claim/ >"$out/$1.json" 2>/dev/null) || true
	sed -i "s#$tmp/kit#/kit#g" "$out/$1.json"
	echo "recorded $1: $(wc -l <"$out/$1.json") events"
}

cp "$root"/course/starters/01-claim/claim.go.txt "$lab/claim.go"
record 01-starter
cp "$root"/solutions/01-claim/claim.go "$lab/claim.go"
record 01-solution
for m in check-then-insert never-released; do
	cp "$root"/solutions/01-claim/claim.go "$lab/claim.go"
	(cd "$lab" && patch -s -p1 <"$root/solutions/01-claim/mistakes/$m.patch")
	record "01-mistake-$m"
done
printf '\nfunc broken() int { return "not an int" }\n' >>"$lab/claim.go"
record 01-compile-error
