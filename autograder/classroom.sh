#!/usr/bin/env bash
# GitHub Classroom: grades the student's repository (a copy of the kit's
# release with their labs) against the pristine kit checked out in KIT.
# labctl grade --format classroom reports the points: a "Points X/Y" line,
# a table in the job summary ($GITHUB_STEP_SUMMARY), and the result for
# GitHub Classroom's autograding reporter in the step output "result"
# ($GITHUB_OUTPUT). Every JSON is made by labctl.
#
# Usage: classroom.sh KIT STUDENT_REPO [LABS]
# LABS is as labctl grade --labs; the default, "present", grades the labs
# the student changed from the starter, each out of its own points.
set -uo pipefail
kit=$1 student=$2 labs=${3:-present}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Only the labs' files are taken from the student's repository.
mkdir -p "$out/class/student"
cp -R "$student/labs" "$out/class/student/labs" 2>/dev/null || true

(cd "$kit" && go run ./cmd/labctl grade --format classroom --labs "$labs" --out "$out/graded" "$out/class")
status=$?
# 0: graded; 1: graded, but some lab could not be (the points say so).
if [ "$status" -gt 1 ]; then
  echo "::error::the grader could not grade this repository (labctl grade exited with status $status)"
  exit 1
fi
