package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/render"
)

// kitRoot is the repository this test runs in.
func kitRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// copyKit copies the kit (without .git and local state) to a new temporary
// directory, the way a student's fresh clone looks.
func copyKit(tb testing.TB) string {
	tb.Helper()
	src := kitRoot(tb)
	dst := tb.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if rel == ".git" && !d.IsDir() {
			return nil // a git worktree's .git file: the copy is no part of that worktree
		}
		if d.IsDir() && (rel == ".git" || rel == ".labkit" || rel == "bin") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		tb.Fatalf("copy kit: %v", err)
	}
	// labs/ may hold a learner's work; the kit's tests grade the starters
	// the kit ships.
	for _, l := range course.Built() {
		if err := grader.WriteStarter(filepath.Join(dst, "labs", l.Dir), l.Lab); err != nil {
			tb.Fatalf("copy kit: %v", err)
		}
	}
	return dst
}

// pristineStarter is lab dir's pristine starter as the kit ships it in labs/,
// with its test file when tests is set: what the kit's tests use, never
// labs/, which may hold a learner's work.
func pristineStarter(tb testing.TB, dir string, tests bool) map[string][]byte {
	tb.Helper()
	l, err := course.Find(dir)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for name, data := range l.Starter {
		out[name] = []byte(data)
	}
	if tests {
		out[l.TestFile] = []byte(l.Shim)
	}
	return out
}

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

type result struct {
	err            error
	code           int
	stdout, stderr string
}

func labctl(tb testing.TB, dir string, args ...string) result {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	err := runIn(context.Background(), func() (string, error) { return dir, nil }, args, &stdout, &stderr)
	code := exitCode(err, &stderr)
	return result{err, code, stdout.String(), stderr.String()}
}

func TestHelpAndUsage(t *testing.T) {
	root := kitRoot(t)
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"top help", []string{"--help"}, 0, "Commands:"},
		{"help command", []string{"help", "check"}, 0, "usage: go run ./cmd/labctl check"},
		{"check help", []string{"check", "--help"}, 0, "-seed"},
		{"verify help", []string{"verify", "-h"}, 0, "catalogued mistake"},
		{"no command", nil, 2, "no command given"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"unknown lab", []string{"check", "99"}, 2, `unknown lab "99"`},
		{"bad flag", []string{"check", "--nope"}, 2, "flag provided but not defined"},
		{"bad seed", []string{"check", "1", "--seed", "abc"}, 2, "want an integer"},
		{"bad race", []string{"check", "1", "--race", "maybe"}, 2, "want auto, on or off"},
		{"bad format", []string{"check", "1", "--format", "xml"}, 2, "want term, md, json, gradescope, classroom, csv"},
		{"two formats", []string{"check", "1", "--md", "--format", "json"}, 2, "--format json and --md ask for two formats"},
		{"md and json", []string{"check", "1", "--md", "--json"}, 2, "--md and --json ask for two formats"},
		{"hint level out of range", []string{"hint", "1", "9"}, 2, "want a number from 1 to 3"},
		{"hint without lab", []string{"hint"}, 2, "want LAB [LEVEL]"},
		{"unreachable redis", []string{"check", "2", "--redis", "127.0.0.1:1"}, 2, "cannot reach a Redis server"},
		{"unreachable TLS redis", []string{"check", "2", "--redis", "rediss://127.0.0.1:1/15"}, 2, "cannot reach a Redis server"},
		{"grade without folder", []string{"grade", "1"}, 2, "want LAB SUBMISSIONS_DIR"},
		{"engine without subcommand", []string{"engine"}, 2, "want status, metrics or demo"},
		{"engine unknown subcommand", []string{"engine", "bogus"}, 2, `unknown subcommand "bogus"`},
		{"engine help", []string{"engine", "--help"}, 0, "an operator's view of the lab-10 engine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := labctl(t, root, tt.args...)
			if r.code != tt.code {
				t.Errorf("labctl %v exit = %d, want %d (stderr %q)", tt.args, r.code, tt.code, r.stderr)
			}
			if out := r.stdout + r.stderr; !strings.Contains(out, tt.contains) {
				t.Errorf("labctl %v output lacks %q:\n%s", tt.args, tt.contains, out)
			}
			if tt.code == 2 && strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 && tt.args != nil {
				t.Errorf("labctl %v: bad input should give one line on stderr, got:\n%s", tt.args, r.stderr)
			}
		})
	}
}

func TestOutsideAKitCheckout(t *testing.T) {
	r := labctl(t, t.TempDir(), "check")
	if r.code != 2 || !strings.Contains(r.stderr, "no kit checkout here") {
		t.Errorf("check outside a kit: exit %d, stderr %q; want 2 and \"no kit checkout here\"", r.code, r.stderr)
	}
}

// TestCheckAcceptance is the foundation issue's acceptance run, on fresh
// copies of the kit: the untouched starter fails every case with its
// explanation; the solution copied over it passes; an edited test file
// changes nothing; every catalogued mistake fails, naming its misconception
// and showing a timeline.
func TestCheckAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite several times")
	}
	lab, _ := course.Find("1")
	labDir := func(kit string) string { return filepath.Join(kit, "labs", lab.Dir) }

	t.Run("starter fails every case", func(t *testing.T) {
		t.Parallel()
		kit := copyKit(t)
		r := labctl(t, kit, "check", "--md")
		if r.code != 1 {
			t.Fatalf("check on the starter: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		for _, c := range lab.Cases {
			if !strings.Contains(r.stdout, "### ✗ `"+c.Name+"`") || !strings.Contains(r.stdout, c.Explanation) {
				t.Errorf("feedback does not show case %s failing with its explanation", c.Name)
			}
		}
		// The edited test file: the student makes TestClaim pass trivially.
		if err := os.WriteFile(filepath.Join(labDir(kit), lab.TestFile), []byte("package claim\n\nimport \"testing\"\n\nfunc TestClaim(t *testing.T) {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		again := labctl(t, kit, "check", "1", "--json")
		var rep grader.Report
		if err := json.Unmarshal([]byte(again.stdout), &rep); err != nil {
			t.Fatalf("check --json: %v\n%s", err, again.stdout)
		}
		var version struct {
			Version int `json:"version"`
		}
		if err := json.Unmarshal([]byte(again.stdout), &version); err != nil || version.Version != grader.ReportVersion {
			t.Errorf("check --json: version %d (%v), want %d", version.Version, err, grader.ReportVersion)
		}
		if again.code != 1 || rep.Score() != 0 || rep.Passed {
			t.Errorf("after editing the test file: exit %d, score %d, passed %v; want the same verdict as before (1, 0, false)", again.code, rep.Score(), rep.Passed)
		}
		list := labctl(t, kit, "list")
		if !strings.Contains(list.stdout, "failing 0/100") {
			t.Errorf("list after a failing check:\n%s", list.stdout)
		}
	})

	t.Run("solution passes", func(t *testing.T) {
		t.Parallel()
		kit := copyKit(t)
		copyFile(t, filepath.Join(kit, "solutions", lab.Dir, "claim.go"), filepath.Join(labDir(kit), "claim.go"))
		r := labctl(t, kit, "check", "claim")
		if r.code != 0 || !strings.Contains(r.stdout, "Every case passes") {
			t.Fatalf("check with the solution: exit %d, want 0 and \"Every case passes\"\n%s%s", r.code, r.stdout, r.stderr)
		}
		list := labctl(t, kit, "list")
		if !strings.Contains(list.stdout, "passed 100/100") {
			t.Errorf("list after a passing check:\n%s", list.stdout)
		}
	})

	mistakes, err := grader.Mistakes(kitRoot(t), lab.Lab)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mistakes {
		t.Run("mistake "+m.Name, func(t *testing.T) {
			t.Parallel()
			kit := copyKit(t)
			putTarget(t, kit, lab.Lab, m.Name)
			r := labctl(t, kit, "check", "01-claim", "--md")
			if r.code != 1 {
				t.Fatalf("check with mistake %s: exit %d, want 1", m.Name, r.code)
			}
			concept := lab.Concept(m.Concept)
			if !strings.Contains(r.stdout, concept.Misconception) {
				t.Errorf("feedback for %s does not name the misconception %q", m.Name, concept.Misconception)
			}
			if !strings.Contains(r.stdout, "**Timeline**") {
				t.Errorf("feedback for %s shows no timeline", m.Name)
			}
		})
	}
}

func TestHintsOneLevelAtATime(t *testing.T) {
	kit := copyKit(t)
	for want := 1; want <= 3; want++ {
		r := labctl(t, kit, "hint", "1")
		if r.code != 0 || !strings.Contains(r.stdout, "hint "+string(rune('0'+want))+" of 3") {
			t.Fatalf("hint call %d: exit %d, output:\n%s%s", want, r.code, r.stdout, r.stderr)
		}
	}
	r := labctl(t, kit, "hint", "1", "1")
	if !strings.Contains(r.stdout, "hint 1 of 3") {
		t.Errorf("hint 1 1 should show level 1 again:\n%s", r.stdout)
	}
}

func TestDocsRenders(t *testing.T) {
	out := t.TempDir()
	r := labctl(t, kitRoot(t), "docs", "--out", out)
	if r.code != 0 {
		t.Fatalf("docs: exit %d: %s", r.code, r.stderr)
	}
	page, err := os.ReadFile(filepath.Join(out, "README.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "01-claim.html") {
		t.Errorf("README.html does not link the lab 01 chapter as HTML")
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errHelp, 0},
		{errFailed, 1},
		{usagef("bad"), 2},
		{errors.New("boom"), 2},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err, io.Discard); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestDocsLinksResolve checks every relative link between course pages:
// the target page exists and, when the link has an anchor, the page has a
// heading with that anchor.
func TestDocsLinksResolve(t *testing.T) {
	root := kitRoot(t)
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append(pages, filepath.Join(root, "README.md"))
	labReadmes, _ := filepath.Glob(filepath.Join(root, "labs", "*", "README.md"))
	pages = append(pages, labReadmes...)
	link := regexp.MustCompile(`\]\(([^)\s#:]+\.md)(#[^)\s]*)?\)`)
	rendered := map[string]string{}
	render := func(path string) string {
		if s, ok := rendered[path]; ok {
			return s
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return ""
		}
		page, err := render.Page("t", string(src))
		if err != nil {
			t.Fatal(err)
		}
		rendered[path] = string(page)
		return rendered[path]
	}
	for _, p := range pages {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, m := range link.FindAllStringSubmatch(string(src), -1) {
			target := filepath.Join(filepath.Dir(p), filepath.FromSlash(m[1]))
			html := render(target)
			if html == "" {
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
				continue
			}
			if anchor := strings.TrimPrefix(m[2], "#"); anchor != "" && !strings.Contains(html, `id="`+anchor+`"`) {
				t.Errorf("%s links to %s#%s, which has no such heading", rel, m[1], anchor)
			}
		}
	}
}

// TestCheckLab03NewKeyPerAttemptShowsTwoRequests is the acceptance run of
// the provider issue: with the "new key on every attempt" mistake over the
// starter, check 3 fails and the timeline shows the customer receiving two
// signing requests.
func TestCheckLab03NewKeyPerAttemptShowsTwoRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite")
	}
	t.Parallel()
	lab, err := course.Find("ambiguous")
	if err != nil {
		t.Fatal(err)
	}
	kit := copyKit(t)
	putTarget(t, kit, lab.Lab, "new-key-per-attempt")
	r := labctl(t, kit, "check", "3", "--md")
	if r.code != 1 {
		t.Fatalf("check 3 with new-key-per-attempt: exit %d, want 1\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "**Timeline**") || !strings.Contains(r.stdout, "has received 2 signing requests") {
		t.Errorf("feedback does not show a timeline with the customer receiving two signing requests:\n%s", r.stdout)
	}
}
