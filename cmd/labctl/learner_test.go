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

	"github.com/fourth-outcome/labkit/course"
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
	st := &state{Labs: map[string]labState{}}
	for _, l := range course.Built() {
		passed := true
		for _, x := range except {
			passed = passed && x != l.Dir
		}
		st.Labs[l.Dir] = labState{Score: 100, Total: 100, Passed: passed, CheckedAt: time.Now()}
	}
	if err := saveState(kit, st); err != nil {
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
	if w := starterChanges(kit, lab.Lab); len(w) != 0 {
		t.Fatalf("first look: warnings %v, want none", w)
	}
	// The kit changes the starter (what git pull brings) ...
	starter, _ := os.ReadFile(file)
	os.WriteFile(file, append(starter, []byte("\n// a new starter comment\n")...), 0o644)
	gitIn(t, kit, "-c", "user.name=kit", "-c", "user.email=kit@example.com", "commit", "-q", "-am", "kit update")
	// ... while the student's edits stay in the working tree.
	os.WriteFile(file, []byte("package claim\n// my work\n"), 0o644)
	w := starterChanges(kit, lab.Lab)
	if len(w) != 1 || !strings.Contains(w[0], "labs/01-claim/claim.go changed") || !strings.Contains(w[0], "git diff") {
		t.Errorf("after a kit update under edits: warnings %q, want one naming claim.go and the git diff to read", w)
	}
	if w := starterChanges(kit, lab.Lab); len(w) != 0 {
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

// TestFirstBuildSaysSo: with an empty build cache the standard library must
// be built first, and check says so before it starts.
func TestFirstBuildSaysSo(t *testing.T) {
	root := kitRoot(t)
	t.Setenv("GOCACHE", t.TempDir())
	if note := firstBuildNote(context.Background(), root, true); !strings.Contains(note, "race-enabled standard library, once: about a minute") {
		t.Errorf("firstBuildNote(race) with an empty cache = %q", note)
	}
	if note := firstBuildNote(context.Background(), root, false); !strings.Contains(note, "building the standard library, once") {
		t.Errorf("firstBuildNote with an empty cache = %q", note)
	}
}

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
	before, _ := os.ReadFile(statePath(kit))
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
	if after, _ := os.ReadFile(statePath(kit)); string(after) != string(before) {
		t.Errorf("an environment error changed the recorded progress:\nbefore %s\nafter %s", before, after)
	}
}
