package main

import (
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/progress"
)

// pathScore is what one path through labctl scored a target: the total
// and, where the path lists them, the points each case earned, in suite
// order.
type pathScore struct {
	score  float64
	earned []float64 // nil when the path gives only a total
}

func (p pathScore) String() string {
	if p.earned == nil {
		return fmt.Sprint(p.score)
	}
	return fmt.Sprintf("%v %v", p.score, p.earned)
}

// earnedOf lists the points each case of rep earned, in suite order.
func earnedOf(rep *grader.Report) []float64 {
	var e []float64
	for _, c := range rep.Cases {
		e = append(e, float64(c.Earned))
	}
	return e
}

// TestOneScoreOnEveryPath grades the same code through every path that
// scores a lab (check, watch, verify, grade with its gradebook,
// Gradescope's results.json and GitHub Classroom's report) and requires
// the same score, case by case where the path lists cases. The targets
// are the ones where the paths once disagreed or could: lab 04's
// reference with the race detector off (its race-only cases are "not
// exercised" on every path: check said 98 and grade 100), two of its
// catalogued mistakes (one race-only, one plain), and lab 01's starter
// with a forgery by guessing (tampered: void, 0, everywhere).
func TestOneScoreOnEveryPath(t *testing.T) {
	if testing.Short() {
		t.Skip("grades four targets through six paths")
	}
	root := kitRoot(t)
	retry, _ := course.Find("4")
	claim, _ := course.Find("1")
	type target struct {
		name string
		lab  course.Lab
		// files builds the target's files over the lab's directory.
		files func(tb testing.TB) map[string][]byte
	}
	fromPut := func(lab course.Lab, what string) func(testing.TB) map[string][]byte {
		return func(tb testing.TB) map[string][]byte {
			kit := filepath.Join(tb.TempDir(), "kit")
			writeTree(tb, filepath.Join(kit, "labs", lab.Dir), pristineStarter(tb, lab.Dir, true))
			writeTree(tb, filepath.Join(kit, "solutions", lab.Dir), goFiles(tb, filepath.Join(root, "solutions", lab.Dir), true))
			if err := os.MkdirAll(filepath.Join(kit, "solutions", lab.Dir, "mistakes"), 0o755); err != nil {
				tb.Fatal(err)
			}
			if what != "solution" {
				copyFile(tb, filepath.Join(root, "solutions", lab.Dir, "mistakes", what+".patch"), filepath.Join(kit, "solutions", lab.Dir, "mistakes", what+".patch"))
			}
			putTarget(tb, kit, lab.Lab, what)
			return goFiles(tb, filepath.Join(kit, "labs", lab.Dir), false)
		}
	}
	var guessed []string
	for _, c := range claim.Cases {
		name := claim.TestName + "/" + c.Name
		guessed = append(guessed, "\\x16--- PASS: "+name+" (0.00s)\\n", "    suites.go:117: labkit-attest "+name+" pass "+strings.Repeat("cd", 32)+"\\n")
	}
	forgery := func(tb testing.TB) map[string][]byte {
		files := pristineStarter(tb, claim.Dir, false)
		files["forge.go"] = []byte(fmt.Sprintf("package claim\n\nimport \"os\"\n\nfunc init() { os.Stdout.WriteString(\"%s\") }\n", strings.Join(guessed, "")))
		return files
	}
	targets := []target{
		{"04-solution", retry, fromPut(retry, "solution")},
		{"04-budget-without-lock", retry, fromPut(retry, "budget-without-lock")},
		{"04-cap-reached-early", retry, fromPut(retry, "cap-reached-early")},
		{"01-forges-by-guessing", claim, forgery},
	}

	// verify runs each target as an independent wrong program of a kit
	// copy whose catalogue holds nothing else, so that it grades exactly
	// these (and the starter and solution it always checks).
	verifyKit := copyKit(t)
	for _, lab := range []course.Lab{retry, claim} {
		for _, p := range []string{filepath.Join(verifyKit, filepath.FromSlash(lab.Fixtures)), filepath.Join(verifyKit, "solutions", lab.Dir, "mistakes")} {
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
		}
		// One catalogued mistake keeps verify's catalogue check quiet;
		// its own result is not compared.
		if err := os.MkdirAll(filepath.Join(verifyKit, "solutions", lab.Dir, "mistakes"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The targets are a measure's programs (verify --programs), which run
	// every case: a fixture's wrong program stops at its first failure.
	programs := t.TempDir()
	files := map[string]map[string][]byte{}
	for _, tg := range targets {
		files[tg.name] = tg.files(t)
		writeTree(t, filepath.Join(programs, tg.lab.Dir, "wrong", tg.name), files[tg.name])
	}

	// Each target gets a kit copy whose lab holds it, and a class folder
	// of one student who submitted it; both outlive the parallel
	// subtests, for Classroom's run after them.
	classes := map[string][2]string{}
	for _, tg := range targets {
		kit := copyKit(t)
		labDir := filepath.Join(kit, "labs", tg.lab.Dir)
		for n := range goFiles(t, labDir, false) {
			os.Remove(filepath.Join(labDir, n))
		}
		writeTree(t, labDir, files[tg.name])
		class := t.TempDir()
		writeTree(t, filepath.Join(class, "student"), files[tg.name])
		classes[tg.name] = [2]string{kit, class}
	}

	var mu sync.Mutex
	got := map[string]map[string]pathScore{} // target, path
	record := func(tg, path string, s pathScore) {
		mu.Lock()
		defer mu.Unlock()
		if got[tg] == nil {
			got[tg] = map[string]pathScore{}
		}
		got[tg][path] = s
	}

	t.Run("paths", func(t *testing.T) {
		t.Run("verify", func(t *testing.T) {
			t.Parallel()
			checks, err := grader.Verify(context.Background(), []grader.Lab{retry.Lab, claim.Lab}, grader.VerifyOptions{Root: verifyKit, Race: false, Programs: programs, Parallel: 1})
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			for _, c := range checks {
				if c.Kind == "wrong" && c.Report != nil {
					record(c.Name, "verify", pathScore{float64(c.Report.Score()), earnedOf(c.Report)})
				}
			}
		})
		for _, tg := range targets {
			t.Run(tg.name, func(t *testing.T) {
				t.Parallel()
				kit, class := classes[tg.name][0], classes[tg.name][1]

				r := labctl(t, kit, "check", tg.lab.Dir, "--race", "off", "--json")
				var rep grader.Report
				if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
					t.Fatalf("check --json: exit %d, not a report (%v):\n%s", r.code, err, r.stderr)
				}
				record(tg.name, "check", pathScore{float64(rep.Score()), earnedOf(&rep)})

				os.Remove(progress.Path(kit))
				keys, runs, finished, _ := startWatch(t, kit, tg.lab.Dir)
				next(t, runs)
				if w := next(t, runs); !w.done {
					t.Fatalf("watch: %+v, want a finished check", w)
				}
				io.WriteString(keys, "q\n")
				<-finished
				st, err := progress.Load(kit)
				if err != nil {
					t.Fatal(err)
				}
				record(tg.name, "watch (recorded progress)", pathScore{score: float64(st.Labs[tg.lab.Dir].Score)})

				out := t.TempDir()
				r = labctl(t, kit, "grade", "--race", "off", "--jobs", "1", "--out", out, tg.lab.Dir, class)
				var sr gradebook.StudentReport
				data, err := os.ReadFile(filepath.Join(out, "student", "report.json"))
				if err == nil {
					err = json.Unmarshal(data, &sr)
				}
				if err != nil || len(sr.Labs) != 1 || sr.Labs[0].Report == nil {
					t.Fatalf("grade: exit %d, report.json unreadable (%v):\n%s", r.code, err, r.stderr)
				}
				record(tg.name, "grade (report.json)", pathScore{float64(sr.Labs[0].Report.Score()), earnedOf(sr.Labs[0].Report)})
				record(tg.name, "grade (gradebook.csv)", pathScore{score: gradebookScore(t, out, tg.lab.Number)})

				r = labctl(t, kit, "grade", "--race", "off", "--jobs", "1", "--format", "gradescope", "--out", t.TempDir(), tg.lab.Dir, class)
				var g gradebook.GradescopeResults
				if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
					t.Fatalf("grade --format gradescope: exit %d, not results.json (%v):\n%s", r.code, err, r.stderr)
				}
				gs := pathScore{score: g.Score}
				for _, c := range g.Tests {
					gs.earned = append(gs.earned, c.Score)
				}
				record(tg.name, "gradescope", gs)

			})
		}
	})

	// Classroom's report goes to the files GITHUB_OUTPUT and
	// GITHUB_STEP_SUMMARY name, process-wide settings: one target at a
	// time.
	for _, tg := range targets {
		kit, class := classes[tg.name][0], classes[tg.name][1]
		stepOut := filepath.Join(t.TempDir(), "output")
		t.Setenv("GITHUB_OUTPUT", stepOut)
		t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(t.TempDir(), "summary"))
		r := labctl(t, kit, "grade", "--race", "off", "--jobs", "1", "--format", "classroom", "--out", t.TempDir(), tg.lab.Dir, class)
		raw, _ := os.ReadFile(stepOut)
		enc, _ := strings.CutPrefix(strings.TrimSpace(string(raw)), "result=")
		dec, _ := base64.StdEncoding.DecodeString(enc)
		var c gradebook.ClassroomReport
		if err := json.Unmarshal(dec, &c); err != nil {
			t.Errorf("%s: grade --format classroom: exit %d, step output %q not a report (%v):\n%s", tg.name, r.code, raw, err, r.stderr)
			continue
		}
		cs := pathScore{score: c.Score()}
		for _, tc := range c.Tests {
			cs.earned = append(cs.earned, tc.Score)
		}
		record(tg.name, "classroom", cs)
		if want := fmt.Sprintf("Points %v/%v", c.Score(), c.MaxScore); strings.TrimSpace(r.stdout) != want {
			t.Errorf("%s: grade --format classroom printed %q, want %q", tg.name, strings.TrimSpace(r.stdout), want)
		}
	}

	for _, tg := range targets {
		ref, ok := got[tg.name]["check"]
		if !ok {
			continue // its subtest failed and said why
		}
		if len(got[tg.name]) != 7 {
			t.Errorf("%s: scored on %d paths, want 7: %v", tg.name, len(got[tg.name]), got[tg.name])
		}
		for path, s := range got[tg.name] {
			if s.score != ref.score || (s.earned != nil && !slices.Equal(s.earned, ref.earned)) {
				t.Errorf("%s: %s scored %v, check scored %v", tg.name, path, s, ref)
			}
		}
	}
	// The targets are what they claim to be: the paths agree on a score
	// that the rules give.
	want := map[string]func(float64) bool{
		"04-solution":            func(s float64) bool { return s > 0 && s < 100 }, // race-only cases not exercised
		"04-budget-without-lock": func(s float64) bool { return s > 0 && s < 100 },
		"04-cap-reached-early":   func(s float64) bool { return s > 0 && s < 100 },
		"01-forges-by-guessing":  func(s float64) bool { return s == 0 },
	}
	for name, ok := range want {
		if s, found := got[name]["check"]; found && !ok(s.score) {
			t.Errorf("%s: every path scored %v, which its rules do not give", name, s.score)
		}
	}
}

// gradebookScore reads the one student's score in lab from
// gradebook.csv: the cell of the column headed "lab NN" (and its points).
func gradebookScore(tb testing.TB, out string, lab int) float64 {
	tb.Helper()
	f, err := os.Open(filepath.Join(out, "gradebook.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 2 {
		tb.Fatalf("gradebook.csv: %d rows (%v), want a header and one student", len(rows), err)
	}
	col := slices.IndexFunc(rows[0], func(h string) bool { return strings.HasPrefix(h, fmt.Sprintf("lab %02d", lab)) })
	if col >= 0 {
		if v, err := strconv.ParseFloat(rows[1][col], 64); err == nil {
			return v
		}
	}
	tb.Fatalf("gradebook.csv has no column %q: %q", fmt.Sprintf("lab %02d", lab), rows[0])
	return 0
}
