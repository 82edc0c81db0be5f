package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/fourth-outcome/labkit/changelog"
	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/internal/progress"
	"github.com/fourth-outcome/labkit/internal/starter"
)

// labctlIn runs labctl in dir with in as what the user types.
func labctlIn(tb testing.TB, dir, in string, args ...string) result {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	ctx := withInput(context.Background(), strings.NewReader(in))
	err := runIn(ctx, func() (string, error) { return dir, nil }, args, &stdout, &stderr)
	code := exitCode(err, &stderr)
	return result{err, code, stdout.String(), stderr.String()}
}

// passAll records every built lab as passed, as if each had been checked.
func passAll(tb testing.TB, kit string, except ...string) {
	tb.Helper()
	st := &progress.State{Labs: map[string]progress.LabState{}}
	for _, l := range course.Built() {
		passed := true
		for _, x := range except {
			passed = passed && x != l.Dir
		}
		st.Labs[l.Dir] = progress.LabState{Score: 100, Total: 100, Passed: passed, CheckedAt: time.Now()}
	}
	if err := progress.Save(kit, st); err != nil {
		tb.Fatal(err)
	}
}

func TestCheckSaysTheCourseIsDone(t *testing.T) {
	kit := copyKit(t)
	passAll(t, kit)
	r := labctl(t, kit, "check")
	if r.code != 0 || !strings.Contains(r.stdout, "Every lab of the course passes") {
		t.Errorf("check with every lab passed: exit %d, stdout %q; want 0 and the course done", r.code, r.stdout)
	}
	if strings.Contains(r.stderr, "checking lab") {
		t.Errorf("check with every lab passed ran a suite:\n%s", r.stderr)
	}
	list := labctl(t, kit, "list")
	if !strings.Contains(list.stdout, "Every lab of the course passes") {
		t.Errorf("list with every lab passed:\n%s", list.stdout)
	}
	if planned := len(course.All()) - len(course.Built()); planned > 0 && !strings.Contains(list.stdout, "planned") {
		t.Errorf("list with every built lab passed and %d planned does not show them:\n%s", planned, list.stdout)
	}
}

func TestListSaysWhatIsNext(t *testing.T) {
	kit := copyKit(t)
	second := course.Built()[1]
	passAll(t, kit, second.Dir)
	r := labctl(t, kit, "list")
	want := "Next: lab " + second.Dir[:2] + ", " + second.Title
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("list = exit %d:\n%s\nwant it to contain %q", r.code, r.stdout, want)
	}
}

// gitKit is a kit copy that is a git clone with one commit, as a student's
// fresh clone is.
func gitKit(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("no git")
	}
	kit := copyKit(tb)
	gitIn(tb, kit, "init", "-q")
	gitIn(tb, kit, "add", "labs")
	gitIn(tb, kit, "-c", "user.name=kit", "-c", "user.email=kit@example.com", "commit", "-q", "-m", "kit")
	return kit
}

func gitIn(tb testing.TB, dir string, args ...string) {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestResetRestoresTheStarterAndHints(t *testing.T) {
	kit := gitKit(t)
	lab, _ := course.Find("1")
	dir := filepath.Join(kit, "labs", lab.Dir)
	starter, err := os.ReadFile(filepath.Join(dir, "claim.go"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "claim.go"), []byte("package claim\n// my work\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "extra.go"), []byte("package claim\n"), 0o644)
	labctl(t, kit, "hint", "1")

	if r := labctlIn(t, kit, "n\n", "reset", "1"); r.code != 0 || !strings.Contains(r.stdout, "Nothing changed") {
		t.Fatalf("reset answered no: exit %d, %q", r.code, r.stdout)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "claim.go")); string(got) != "package claim\n// my work\n" {
		t.Fatalf("reset answered no changed claim.go")
	}

	r := labctlIn(t, kit, "y\n", "reset", "1")
	if r.code != 0 {
		t.Fatalf("reset: exit %d: %s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "claim.go")); !bytes.Equal(got, starter) {
		t.Errorf("after reset, claim.go is not the starter")
	}
	if _, err := os.Stat(filepath.Join(dir, "extra.go")); err == nil {
		t.Errorf("after reset, extra.go (not in the starter) is still there")
	}
	backups, _ := filepath.Glob(filepath.Join(kit, ".labkit", "backup", lab.Dir+"-*", "claim.go"))
	if len(backups) != 1 {
		t.Fatalf("backups of claim.go = %v, want one", backups)
	}
	if got, _ := os.ReadFile(backups[0]); string(got) != "package claim\n// my work\n" {
		t.Errorf("the backup does not hold the student's claim.go: %q", got)
	}
	if h := labctl(t, kit, "hint", "1"); !strings.Contains(h.stdout, "hint 1 of 3") {
		t.Errorf("after reset the hints do not start again at level 1:\n%s", h.stdout)
	}
}

func TestStarterChangedUnderTheStudentsEdits(t *testing.T) {
	kit := gitKit(t)
	lab, _ := course.Find("1")
	file := filepath.Join(kit, "labs", lab.Dir, "claim.go")
	if w, _ := starter.Changes(kit, lab.Lab); len(w) != 0 {
		t.Fatalf("first look: warnings %v, want none", w)
	}
	// The kit changes the starter (what git pull brings) ...
	orig, _ := os.ReadFile(file)
	os.WriteFile(file, append(orig, []byte("\n// a new starter comment\n")...), 0o644)
	gitIn(t, kit, "-c", "user.name=kit", "-c", "user.email=kit@example.com", "commit", "-q", "-am", "kit update")
	// ... while the student's edits stay in the working tree.
	os.WriteFile(file, []byte("package claim\n// my work\n"), 0o644)
	w, _ := starter.Changes(kit, lab.Lab)
	if len(w) != 1 || !strings.Contains(w[0], "labs/01-claim/claim.go changed") || !strings.HasSuffix(w[0], "\n+// a new starter comment") ||
		!strings.Contains(w[0], "\n--- labs/01-claim/claim.go (the starter at your last check)\n+++ labs/01-claim/claim.go (the kit's new starter)\n@@ ") {
		t.Errorf("after a kit update under edits: warnings %q, want one naming claim.go with the diff of what the kit changed", w)
	}
	if w, _ := starter.Changes(kit, lab.Lab); len(w) != 0 {
		t.Errorf("second look: warnings %v, want none (said once)", w)
	}
}

// TestCheckStarterOneScreenAndHTML is the acceptance on lab 01's
// starter: labctl check prints at most 50 lines, ending with the next step
// and without colour outside a terminal, and --html writes feedback whose
// links to the course reach pages and anchors of the rendered site, not the
// .md sources.
func TestCheckStarterOneScreenAndHTML(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite")
	}
	t.Parallel()
	kit := copyKit(t)
	out := filepath.Join(kit, "feedback", "lab1.html")
	os.MkdirAll(filepath.Dir(out), 0o755)
	r := labctl(t, kit, "check", "1", "--quiet", "--html", out)
	if r.code != 1 {
		t.Fatalf("check 1 --html on the starter: exit %d, want 1: %s", r.code, r.stderr)
	}
	if n := strings.Count(r.stdout, "\n"); n > maxTermLines {
		t.Errorf("check 1 on the starter: %d lines, want at most %d:\n%s", n, maxTermLines, r.stdout)
	}
	if !strings.Contains(r.stdout, "\nNext: Fix ") || strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("check 1 on the starter: want a next step and no colour outside a terminal:\n%s", r.stdout)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	links := hrefRE.FindAllStringSubmatch(string(page), -1)
	if len(links) == 0 {
		t.Fatalf("feedback page has no links")
	}
	for _, m := range links {
		path, anchor, _ := strings.Cut(m[1], "#")
		if strings.HasSuffix(path, ".md") {
			t.Errorf("feedback links %s, a Markdown source, not a page of the site", m[1])
			continue
		}
		target, err := os.ReadFile(filepath.Join(filepath.Dir(out), filepath.FromSlash(path)))
		if err != nil {
			t.Errorf("feedback links %s: %v", m[1], err)
			continue
		}
		if anchor != "" && !strings.Contains(string(target), `id="`+anchor+`"`) {
			t.Errorf("feedback links %s: the page has no such anchor", m[1])
		}
	}
}

var hrefRE = regexp.MustCompile(`href="([^"]+)"`)

// TestRedisEnvironmentErrorsKeepProgress: a database holding other keys,
// named by --redis (host:port or a redis:// URL) or by REDIS_ADDR, is the
// environment's problem: one line, exit 2, and the recorded progress is
// untouched.
func TestRedisEnvironmentErrorsKeepProgress(t *testing.T) {
	srv := miniredis.RunT(t)
	srv.Set("someone-elses-key", "1")
	srv.Select(15)
	srv.Set("someone-elses-key", "1")
	kit := copyKit(t)
	passAll(t, kit)
	before, _ := os.ReadFile(progress.Path(kit))
	for _, args := range [][]string{
		{"check", "2", "--redis", "redis://" + srv.Addr() + "/15"},
		{"check", "2", "--redis", srv.Addr()},
	} {
		r := labctl(t, kit, args...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "someone-elses-key") {
			t.Errorf("labctl %v against a database with other keys: exit %d, stderr %q; want 2 and one line naming the key", args, r.code, r.stderr)
		}
	}
	t.Setenv("REDIS_ADDR", "redis://"+srv.Addr()+"/15")
	r := labctl(t, kit, "check", "2")
	if r.code != 2 || !strings.Contains(r.stderr, "REDIS_ADDR=") {
		t.Errorf("check 2 with REDIS_ADDR at a database with other keys: exit %d, stderr %q; want 2 naming REDIS_ADDR", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(progress.Path(kit)); string(after) != string(before) {
		t.Errorf("an environment error changed the recorded progress:\nbefore %s\nafter %s", before, after)
	}
}

// TestUpdateRecipeInTheREADME runs the README's recipe for taking a new
// version of the kit in a clone whose learner has committed work while the
// kit moved on (divergent branches, where a plain git pull stops on git
// 2.27 and later), with no git configuration of the learner's own: every
// command succeeds, and both the learner's work and the kit's change are
// there afterwards.
func TestUpdateRecipeInTheREADME(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	readme, err := os.ReadFile(filepath.Join(kitRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Updating the kit mid-course\n")
	_, block, ok2 := strings.Cut(section, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("README.md has no sh block under \"## Updating the kit mid-course\"")
	}
	tmp := t.TempDir()
	env := append(os.Environ(), "HOME="+tmp, "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=learner", "GIT_AUTHOR_EMAIL=l@example.com", "GIT_COMMITTER_NAME=learner", "GIT_COMMITTER_EMAIL=l@example.com")
	sh := func(dir, script string) (string, error) {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(dir, script string) {
		t.Helper()
		if out, err := sh(dir, script); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	kit, clone := filepath.Join(tmp, "kit"), filepath.Join(tmp, "clone")
	must(tmp, "git init -q kit && mkdir -p kit/labs/01-claim && printf 'package claim\\n\\n// TODO\\n' > kit/labs/01-claim/claim.go && echo kit > kit/README.md && cd kit && git add . && git commit -qm v1")
	must(tmp, "git clone -q kit clone")
	// The kit moves on (a new lab, a changed starter comment) ...
	must(kit, "mkdir labs/02-redis && echo 'package redis' > labs/02-redis/redis.go && printf '// Package claim: new comment\\npackage claim\\n\\n// TODO\\n' > labs/01-claim/claim.go && git add . && git commit -qm v2")
	// ... while the learner works on lab 01.
	must(clone, "printf '\\nfunc mine() {}\\n' >> labs/01-claim/claim.go")
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if out, err := sh(clone, line); err != nil {
			t.Fatalf("README's update recipe: %s: %v\n%s", line, err, out)
		}
	}
	got, err := os.ReadFile(filepath.Join(clone, "labs", "01-claim", "claim.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "func mine() {}") || !strings.Contains(string(got), "new comment") {
		t.Errorf("after the README's update recipe, claim.go = %q, want the learner's work and the kit's new comment", got)
	}
	if _, err := os.Stat(filepath.Join(clone, "labs", "02-redis", "redis.go")); err != nil {
		t.Errorf("after the README's update recipe, the kit's new lab is missing: %v", err)
	}
	if out, _ := sh(clone, "git status --porcelain"); strings.TrimSpace(out) != "" {
		t.Errorf("after the README's update recipe, the clone is not clean:\n%s", out)
	}
}

// TestCheckSaysWhichRedis: a Redis lab's feedback names the server its
// suite ran against, the one --redis names or the embedded one.
func TestCheckSaysWhichRedis(t *testing.T) {
	t.Setenv("REDIS_ADDR", "") // the embedded server unless --redis names one
	srv := miniredis.RunT(t)
	kit := copyKit(t)
	// --race off: the race detector has nothing to do with the line this
	// test reads, and its build of lab 02 is the slowest of make quick.
	r := labctl(t, kit, "check", "2", "--quiet", "--race", "off", "--redis", "redis://"+srv.Addr()+"/3")
	if want := "· Redis " + srv.Addr() + " db 3 ·"; !strings.Contains(r.stdout, want) {
		t.Errorf("check 2 --redis redis://%s/3: the feedback lacks %q:\n%s", srv.Addr(), want, r.stdout)
	}
	r = labctl(t, kit, "check", "2", "--quiet", "--race", "off", "--md")
	if want := "· Redis: embedded miniredis ·"; !strings.Contains(r.stdout, want) {
		t.Errorf("check 2 --md without a server: the feedback lacks %q:\n%s", want, r.stdout)
	}
}

// TestCheckWithTheTestFileDeleted: a lab whose test file was deleted is
// still graded, with the kit's own copy, and check says so in one line.
func TestCheckWithTheTestFileDeleted(t *testing.T) {
	kit := copyKit(t)
	if err := os.Remove(filepath.Join(kit, "labs", "01-claim", "claim_test.go")); err != nil {
		t.Fatal(err)
	}
	r := labctl(t, kit, "check", "1", "--quiet")
	if r.code != 1 || !strings.Contains(r.stdout, "results_returned_unchanged") || strings.Contains(r.stdout, "does not compile") {
		t.Errorf("check 1 without claim_test.go: exit %d, want 1 and every case graded on the starter:\n%s", r.code, r.stdout)
	}
	var notes []string
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if strings.Contains(l, "claim_test.go") {
			notes = append(notes, l)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "labs/01-claim/claim_test.go is missing: check grades with the kit's own copy") ||
		!strings.Contains(notes[0], "(git checkout -- labs/01-claim/claim_test.go)") {
		t.Errorf("check 1 without claim_test.go: notes %q, want one saying it grades anyway and how to restore the file", notes)
	}
	if r := labctl(t, filepath.Join(kit, "labs", "01-claim"), "check", "1", "--quiet"); !strings.Contains(r.stderr, "(git checkout -- claim_test.go)") {
		t.Errorf("check 1 from labs/01-claim without claim_test.go: the note's command is not from there:\n%s", r.stderr)
	}
}

func TestListKeepsAPassUnderEarlierRules(t *testing.T) {
	kit := copyKit(t)
	lab, _ := course.Find("5")
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	st := &progress.State{Labs: map[string]progress.LabState{lab.Dir: progress.AfterCheck(
		progress.AfterCheck(progress.LabState{}, 100, 100, true, 10, at), 95, 100, false, changelog.Level(), at.Add(time.Hour))}}
	if err := progress.Save(kit, st); err != nil {
		t.Fatal(err)
	}
	r := labctl(t, kit, "list")
	for _, want := range []string{"failing 95/100 (passed 2026-11-01 under rules level 10)", "Lab 05 passed under earlier rules; that pass stays on record"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("list = exit %d:\n%s\nwant it to contain %q", r.code, r.stdout, want)
		}
	}
}

func TestSolutionOpensOnceTheLabPasses(t *testing.T) {
	kit := copyKit(t)
	lab, _ := course.Find("1")
	if r := labctl(t, kit, "solution", "1"); r.code != 2 || !strings.Contains(r.stderr, "has not passed yet") || strings.Contains(r.stdout, "func") {
		t.Errorf("solution 1 before lab 01 passes: exit %d, stdout %q, stderr %q; want exit 2, nothing shown", r.code, r.stdout, r.stderr)
	}
	if err := progress.Save(kit, &progress.State{Labs: map[string]progress.LabState{lab.Dir: progress.AfterCheck(progress.LabState{}, 100, 100, true, changelog.Level(), time.Now())}}); err != nil {
		t.Fatal(err)
	}
	r := labctl(t, kit, "solution", "1")
	want := []string{"── solutions/" + lab.Dir + "/claim.go ──", "your code against the reference"}
	if _, err := exec.LookPath("git"); err == nil {
		want = append(want, "diff --git", "+++ b/solutions/"+lab.Dir+"/claim.go")
	}
	for _, w := range want {
		if r.code != 0 || !strings.Contains(r.stdout, w) {
			t.Errorf("solution 1 after lab 01 passed: exit %d, want %q in:\n%s%s", r.code, w, r.stdout, r.stderr)
		}
	}
	if r := labctl(t, kit, "solution", "1", "2"); r.code != 2 {
		t.Errorf("solution 1 2: exit %d, want 2", r.code)
	}
	if err := os.RemoveAll(filepath.Join(kit, "solutions")); err != nil {
		t.Fatal(err)
	}
	if r := labctl(t, kit, "solution", "1"); r.code != 2 || !strings.Contains(r.stderr, "student release") {
		t.Errorf("solution 1 without solutions/: exit %d, %q, want exit 2 saying the release has none", r.code, r.stderr)
	}
}
