#!/usr/bin/env bash
# GitHub Classroom: grades the student's repository (a copy of the kit with
# their labs) against the pristine kit checked out in KIT, and reports the
# points: a table in the job summary, a "Points X/Y" line, and the
# autograding reporter's JSON in the step output "result" (base64).
#
# Usage: classroom.sh KIT STUDENT_REPO [LABS]
set -uo pipefail
kit=$1 student=$2 labs=${3:-all}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/class"
# Only the labs' files are taken from the student's repository.
mkdir -p "$out/class/student"
cp -r "$student/labs" "$out/class/student/labs" 2>/dev/null || true

(cd "$kit" && go run ./cmd/labctl grade --labs "$labs" --out "$out/graded" "$out/class") || true
results="$out/graded/student/results.json"
if [ ! -s "$results" ]; then
  echo "Points 0/100"
  echo "::error::the grader could not grade this repository"
  exit 1
fi
python3 - "$results" <<'PY'
import base64, json, os, sys
r = json.load(open(sys.argv[1]))
score = r.get("score", 0)
max_score = sum(t.get("max_score", 0) for t in r.get("tests", []))
def fmt(x):
    return ("%g" % x)
print("Points %s/%s" % (fmt(score), fmt(max_score)))
summary = os.environ.get("GITHUB_STEP_SUMMARY")
if summary:
    with open(summary, "a") as f:
        f.write("## Points %s/%s\n\n| test | points | status |\n| --- | ---: | --- |\n" % (fmt(score), fmt(max_score)))
        for t in r["tests"]:
            f.write("| %s | %s/%s | %s |\n" % (t["name"], fmt(t["score"]), fmt(t["max_score"]), t["status"]))
        f.write("\n" + r.get("output", "") + "\n")
report = {"version": 1, "status": "pass" if score == max_score else "fail", "max_score": max_score,
          "tests": [{"name": t["name"], "status": "pass" if t["status"] == "passed" else "fail",
                     "message": t.get("output", ""), "score": t["score"]} for t in r["tests"]]}
out = os.environ.get("GITHUB_OUTPUT")
if out:
    with open(out, "a") as f:
        f.write("result=%s\n" % base64.b64encode(json.dumps(report).encode()).decode())
PY
