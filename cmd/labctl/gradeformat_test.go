package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
)

func TestGradeFormatUsage(t *testing.T) {
	root := kitRoot(t)
	r := labctl(t, root, "grade", "--format", "xml", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "want term, md, json, gradescope, classroom, csv") {
		t.Errorf("grade --format xml: exit %d, %q; want 2 and the formats", r.code, r.stderr)
	}
	class := t.TempDir()
	for _, s := range []string{"a", "b"} {
		writeTree(t, filepath.Join(class, s), map[string][]byte{"claim.go": []byte("package claim\n")})
	}
	r = labctl(t, root, "grade", "--format", "gradescope", "--out", t.TempDir(), "1", class)
	var g gradebook.GradescopeResults
	if err := json.Unmarshal([]byte(r.stdout), &g); r.code != 2 || err != nil || g.Score != 0 || !strings.Contains(g.Output, "grades one submission") {
		t.Errorf("grade --format gradescope over two submissions: exit %d, stdout %q (%v); want 2 and a score-0 results.json with the reason", r.code, r.stdout, err)
	}
}

// TestGradeFormat grades a whole repository in which only lab 01 is done,
// with --labs present: Gradescope's results list lab 01's cases alone, out
// of 100, on stdout; the summary line goes to stderr; Classroom's points,
// job summary and step output agree.
func TestGradeFormat(t *testing.T) {
	if testing.Short() {
		t.Skip("grades a submission")
	}
	root := kitRoot(t)
	class := t.TempDir()
	files := map[string][]byte{}
	for _, l := range course.Built() {
		for n, d := range pristineStarter(t, l.Dir, true) {
			files["labs/"+l.Dir+"/"+n] = d
		}
	}
	for n, d := range goFiles(t, filepath.Join(root, "solutions", "01-claim"), false) {
		files["labs/01-claim/"+n] = d
	}
	writeTree(t, filepath.Join(class, "student"), files)
	claim, _ := course.Find("1")

	r := labctl(t, root, "grade", "--format", "gradescope", "--labs", "present", "--out", t.TempDir(), class)
	var g gradebook.GradescopeResults
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil || r.code != 0 {
		t.Fatalf("grade --format gradescope: exit %d, stdout not results.json (%v):\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	var max float64
	for _, tc := range g.Tests {
		max += tc.MaxScore
	}
	if g.Score != 100 || max != 100 || len(g.Tests) != len(claim.Cases) {
		t.Errorf("results.json = %v of %v over %d tests, want 100 of 100 over lab 01's %d cases\noutput: %s\nstderr: %s", g.Score, max, len(g.Tests), len(claim.Cases), g.Output, r.stderr)
		for _, tc := range g.Tests {
			if tc.Score != tc.MaxScore {
				t.Logf("%s: %v of %v: %s", tc.Name, tc.Score, tc.MaxScore, tc.Output)
			}
		}
	}
	if !strings.Contains(r.stderr, "graded 1 of 1 submissions over 1 lab(s)") {
		t.Errorf("stderr lacks the summary line:\n%s", r.stderr)
	}

	summary, output := filepath.Join(t.TempDir(), "summary"), filepath.Join(t.TempDir(), "output")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	t.Setenv("GITHUB_OUTPUT", output)
	r = labctl(t, root, "grade", "--format", "classroom", "--labs", "present", "--out", t.TempDir(), class)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Points 100/100" {
		t.Errorf("grade --format classroom: exit %d, stdout %q; want Points 100/100", r.code, r.stdout)
	}
	data, _ := os.ReadFile(output)
	enc, _ := strings.CutPrefix(strings.TrimSpace(string(data)), "result=")
	raw, _ := base64.StdEncoding.DecodeString(enc)
	var c gradebook.ClassroomReport
	if err := json.Unmarshal(raw, &c); err != nil || c.Points() != "100/100" || c.Status != "pass" || len(c.Tests) != len(claim.Cases) {
		t.Errorf("step output = %q (%v), want result=<base64 of a passing report, 100/100 over lab 01's cases>", data, err)
	}
	if s, _ := os.ReadFile(summary); !strings.Contains(string(s), "## Points 100/100") {
		t.Errorf("job summary lacks the points:\n%s", s)
	}
}

// TestVerifyPrograms runs verify --programs over a folder of programs
// written outside the kit: a wrong one the suite catches, a correct one it
// passes, and a "wrong" one that is the reference (not caught), so the
// tally counts each and verify fails.
func TestVerifyPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite three times")
	}
	root := kitRoot(t)
	lab, _ := course.Find("1")
	dir := t.TempDir()
	sol := goFiles(t, filepath.Join(root, "solutions", lab.Dir), false)
	m, err := grader.ReadMistake(filepath.Join(root, "solutions", lab.Dir, "mistakes", "check-then-insert.patch"))
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := m.Apply(filepath.Join(root, "solutions", lab.Dir))
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, filepath.Join(dir, "01", "wrong", "check-then-insert"), wrong)
	writeTree(t, filepath.Join(dir, "01", "wrong", "not-really-wrong"), sol)
	writeTree(t, filepath.Join(dir, "01", "correct", "reference"), sol)

	r := labctl(t, root, "verify", "--programs", dir, "1")
	if r.code != 1 {
		t.Errorf("verify --programs: exit %d, want 1 (a wrong program passed)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if want := "| 01-claim | 1/2 (50%) | 1/1 (100%) | not-really-wrong |  |"; !strings.Contains(r.stdout, want) {
		t.Errorf("verify --programs output lacks the tally row %q:\n%s", want, r.stdout)
	}
	if strings.Contains(r.stdout, "starter") || strings.Contains(r.stdout, "mistake") {
		t.Errorf("verify --programs ran the kit's own starter or mistakes too:\n%s", r.stdout)
	}
	if r := labctl(t, root, "verify", "--programs", filepath.Join(dir, "nope")); r.code != 2 {
		t.Errorf("verify --programs on a missing folder: exit %d, want 2", r.code)
	}
}
