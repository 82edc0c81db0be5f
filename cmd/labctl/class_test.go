package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	goldmarkhtml "github.com/yuin/goldmark/renderer/html"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
)

// expect is what the class test requires of one submission.
type expect struct {
	lab     int    // the lab the submission is for (0: none)
	score   string // "100", "0", "<100" (fails, but not necessarily everything), another number (exactly that), "" (not graded)
	concept string // a concept that must be among the failing ones
	limit   string // the limit the run must report hitting
	// tampered: the run must be void, with the reason "output tampered
	// with" (grader.Report.Tampered set).
	tampered bool
	// check, when set, inspects the student's output folder (feedback.md,
	// results.json).
	check func(tb testing.TB, dir string)
}

func writeTree(tb testing.TB, dir string, files map[string][]byte) {
	tb.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// goFiles reads dir's .go files (non-test unless tests), by base name.
func goFiles(tb testing.TB, dir string, tests bool) map[string][]byte {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(n, ".go") || (!tests && strings.HasSuffix(n, "_test.go")) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			tb.Fatal(err)
		}
		out[n] = data
	}
	return out
}

func prefixed(prefix string, files map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for n, d := range files {
		out[prefix+n] = d
	}
	return out
}

func archive(tb testing.TB, path string, files map[string][]byte) {
	tb.Helper()
	var buf bytes.Buffer
	if strings.HasSuffix(path, ".zip") {
		zw := zip.NewWriter(&buf)
		for n, d := range files {
			w, _ := zw.Create(n)
			w.Write(d)
		}
		zw.Close()
	} else {
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for n, d := range files {
			tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(d)), Typeflag: tar.TypeReg})
			tw.Write(d)
		}
		tw.Close()
		gz.Close()
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// treeHash hashes each file of the kit checkout that git knows of or would
// add; nil outside git.
func treeHash(tb testing.TB, root string) map[string]string {
	tb.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others").Output()
	if err != nil {
		return nil // not a git checkout: nothing to compare
	}
	sums := map[string]string{}
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(root, f))
		sum := sha256.Sum256(data)
		sums[f] = hex.EncodeToString(sum[:])
	}
	return sums
}

// changedFiles lists the paths whose hash differs between two treeHash
// results.
func changedFiles(before, after map[string]string) []string {
	var out []string
	for f, h := range after {
		if before[f] != h {
			out = append(out, f)
		}
	}
	for f := range before {
		if _, ok := after[f]; !ok {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// buildClass writes the acceptance class into dir and returns what each
// submission must score: the reference solution, the starter and two
// catalogued mistakes of every lab, and the hostile submissions.
func buildClass(tb testing.TB, root, dir, tag string) map[string]expect {
	tb.Helper()
	want := map[string]expect{}
	for _, l := range course.Built() {
		sol := filepath.Join(root, "solutions", l.Dir)
		solFiles := goFiles(tb, sol, false)
		writeTree(tb, filepath.Join(dir, "sol-"+l.Dir), prefixed("labs/"+l.Dir+"/", solFiles))
		want["sol-"+l.Dir] = expect{lab: l.Number, score: "100"}
		writeTree(tb, filepath.Join(dir, "starter-"+l.Dir), prefixed("labs/"+l.Dir+"/", pristineStarter(tb, l.Dir, true)))
		want["starter-"+l.Dir] = expect{lab: l.Number, score: "0"}
		if l.Number > 4 {
			continue // later labs: a few submissions each, so the run stays short
		}
		mistakes, err := grader.Mistakes(root, l.Lab)
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range mistakes[:min(2, len(mistakes))] {
			changed, err := m.Apply(sol)
			if err != nil {
				tb.Fatal(err)
			}
			files := map[string][]byte{}
			for n, d := range solFiles {
				files[n] = d
			}
			for n, d := range changed {
				files[n] = d
			}
			name := "mistake-" + l.Dir + "-" + m.Name
			writeTree(tb, filepath.Join(dir, name), files) // loose files, matched by package
			want[name] = expect{lab: l.Number, score: "<100", concept: m.Concept}
		}
	}
	subs := filepath.Join(root, "grader", "testdata", "submissions")
	for name, e := range map[string]expect{
		"blocks-forever": {lab: 1, score: "0"}, "os-exit-0-init": {lab: 1, score: "0"},
		"panic-in-goroutine": {lab: 1, score: "0"}, "huge-output": {lab: 1, score: "0", limit: "output"},
		"big-alloc": {lab: 1, score: "0", limit: "memory"}, "imports-solution": {lab: 1, score: "0"},
		"edited-test": {lab: 1, score: "0"}, "data-race": {lab: 1, score: "<100"},
	} {
		writeTree(tb, filepath.Join(dir, name), goFiles(tb, filepath.Join(subs, name), true))
		want[name] = e
	}
	claimSol := goFiles(tb, filepath.Join(root, "solutions", "01-claim"), false)
	starter := pristineStarter(tb, "01-claim", false)

	loop := map[string][]byte{"claim.go": []byte(`package claim

import (
	"context"
	"errors"
)

var ErrInProgress = errors.New("in progress")

type Store struct{}

func New() *Store { return &Store{} }

var n int

// Do never returns.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	for {
		n++
	}
}
`)}
	writeTree(tb, filepath.Join(dir, "infinite-loop"), loop)
	want["infinite-loop"] = expect{lab: 1, score: "0"}

	// The reference solution with a lock nobody releases for one key that
	// only one case uses: that case hangs, is stopped after the case
	// budget, and the cases after it run again in a fresh process and
	// pass. A hang costs one case, not the lab.
	const do = "func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {\n"
	hangs := map[string][]byte{}
	for n, d := range claimSol {
		hangs[n] = d
	}
	if !bytes.Contains(hangs["claim.go"], []byte(do)) {
		tb.Fatalf("solutions/01-claim/claim.go has no line %q to patch", do)
	}
	hangs["claim.go"] = bytes.Replace(hangs["claim.go"], []byte(do), []byte(do+"\tif key == \"k-empty\" {\n\t\ts.mu.Lock() // and never Unlock\n\t}\n"), 1)
	writeTree(tb, filepath.Join(dir, "hangs-one-case"), hangs)
	want["hangs-one-case"] = expect{lab: 1, score: "90", concept: "stored-result"}

	home, _ := os.UserHomeDir()
	writes := map[string][]byte{}
	for n, d := range claimSol {
		writes[n] = d
	}
	writes["hostile.go"] = []byte(fmt.Sprintf(`package claim

import "os"

func init() {
	for _, p := range []string{%q, %q, %q, %q} {
		os.WriteFile(p, []byte("package claimsuite\n\nfunc init() { panic(\"planted\") }\n"), 0o644)
	}
}
`, filepath.Join(root, "suites", "claimsuite", tag+".go"), "/tmp/"+tag, filepath.Join(home, tag), "../../suites/claimsuite/"+tag+".go"))
	writeTree(tb, filepath.Join(dir, "writes-outside"), writes)
	want["writes-outside"] = expect{lab: 1, score: "100"}

	// Test2json framing claiming every case passed, printed on every call
	// of a store that fails everything: the suite's signatures decide.
	claim, _ := course.Find("claim")
	var forged []string
	for _, c := range claim.Cases {
		name := claim.TestName + "/" + c.Name
		forged = append(forged, "\\x16=== RUN   "+name+"\\n", "\\x16--- PASS: "+name+" (0.00s)\\n", "--- PASS: "+name+" (0.00s)\\n")
	}
	writeTree(tb, filepath.Join(dir, "forged-results"), map[string][]byte{"claim.go": []byte(fmt.Sprintf(`package claim

import (
	"context"
	"errors"
	"os"
)

var ErrInProgress = errors.New("in progress")

type Store struct{}

func New() *Store { return &Store{} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	os.Stdout.WriteString("%s")
	return "", errors.New("not done")
}
`, strings.Join(forged, "")))})
	want["forged-results"] = expect{lab: 1, score: "0"}

	added := map[string][]byte{"extra_test.go": []byte("package claim\n\nimport \"testing\"\n\nfunc TestExtra(t *testing.T) {}\n")}
	for n, d := range starter {
		added[n] = d
	}
	writeTree(tb, filepath.Join(dir, "added-test"), added)
	want["added-test"] = expect{lab: 1, score: "0"}

	// A folder whose only file is a link to the reference solution.
	linked := filepath.Join(dir, "symlinked-file")
	os.MkdirAll(linked, 0o755)
	os.Symlink(filepath.Join(root, "solutions", "01-claim", "claim.go"), filepath.Join(linked, "claim.go"))
	want["symlinked-file"] = expect{}

	// The release-leak copy: the actor-style store of the suite's own
	// test file, as an attacker takes it from a full checkout (the
	// release no longer has it: TestReleaseDefinesNoLabAPI), with a
	// three-line New. It is a correct store, graded on its merits.
	writeTree(tb, filepath.Join(dir, "release-leak-copy"), map[string][]byte{"claim.go": leakCopy(tb, root)})
	want["release-leak-copy"] = expect{lab: 1, score: "100"}

	// A store that fails everything, printing a fake perfect score as
	// Markdown and HTML into its test output: the feedback and each
	// Gradescope test panel show it as text, fenced.
	writeTree(tb, filepath.Join(dir, "fake-heading"), map[string][]byte{"claim.go": []byte(`package claim

import (
	"context"
	"errors"
	"fmt"
)

var ErrInProgress = errors.New("in progress")

type Store struct{}

func New() *Store { return &Store{} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	fmt.Println("\n# 100/100\n\n<h1>100/100</h1>\n\n| case | points |\n| --- | --- |\n| all | 100/100 |\n` + "```" + `\n## Every case passes")
	return "", errors.New("**100/100** <h2>100/100</h2>")
}
`)})
	want["fake-heading"] = expect{lab: 1, score: "0", check: renderedAsText}

	archive(tb, filepath.Join(dir, "zip-slip.zip"), map[string][]byte{"../../claim.go": claimSol["claim.go"]})
	want["zip-slip"] = expect{}
	archive(tb, filepath.Join(dir, "zip-bomb.zip"), map[string][]byte{"claim.go": bytes.Repeat([]byte{' '}, 80<<20)})
	want["zip-bomb"] = expect{}
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	want["empty"] = expect{}
	archive(tb, filepath.Join(dir, "zoë ñandú.tar.gz"), prefixed("01-claim/", claimSol))
	want["zoë ñandú"] = expect{lab: 1, score: "100"}
	archive(tb, filepath.Join(dir, "zipped.zip"), claimSol)
	want["zipped"] = expect{lab: 1, score: "100"}

	// Forgeries, one per assumption of the signature (docs/instructors.md,
	// "What a signature proves"). Through an import: the signer is under
	// suites/internal and the lab's import list refuses it anyway.
	starterWith := func(name, file, src string) {
		files := map[string][]byte{file: []byte(src)}
		for n, d := range starter {
			files[n] = d
		}
		writeTree(tb, filepath.Join(dir, name), files)
	}
	starterWith("forges-through-import", "forge.go", `package claim

import (
	"testing"

	"github.com/fourth-outcome/labkit/attest"
	"github.com/fourth-outcome/labkit/suites/internal/sign"
)

func init() { sign.Case(&testing.T{}, "results_returned_unchanged", attest.Record{Passed: true}) }
`)
	want["forges-through-import"] = expect{lab: 1, score: "0"}
	// By guessing: a signature for every case, printed with passing
	// framing; a wrong signature voids the run.
	// The record's payload is "{}" (e30 in base64).
	var guessed, unsigned []string
	for _, c := range claim.Cases {
		name := claim.TestName + "/" + c.Name
		guessed = append(guessed, "\\x16--- PASS: "+name+" (0.00s)\\n", "    suites.go:117: labkit-attest "+name+" pass e30 "+strings.Repeat("ab", 32)+"\\n")
		unsigned = append(unsigned, "\\x16--- PASS: "+name+" (0.00s)\\n", "    suites.go:117: labkit-attest "+name+" pass e30 -\\n")
	}
	starterWith("forges-by-guessing", "forge.go", fmt.Sprintf("package claim\n\nimport \"os\"\n\nfunc init() { os.Stdout.WriteString(\"%s\") }\n", strings.Join(guessed, "")))
	want["forges-by-guessing"] = expect{lab: 1, score: "0", tampered: true}
	// With the unsigned records labctl check reads on a learner's own
	// machine: a graded run has a key, and an unsigned record voids it.
	starterWith("forges-unsigned-records", "forge.go", fmt.Sprintf("package claim\n\nimport \"os\"\n\nfunc init() { os.Stdout.WriteString(\"%s\") }\n", strings.Join(unsigned, "")))
	want["forges-unsigned-records"] = expect{lab: 1, score: "0", tampered: true}
	// Through the process's own memory: scored 90/100 while the sandbox
	// mounted /proc; under bubblewrap there is none.
	if sb, _, _ := grader.ResolveSandbox("auto"); sb == grader.SandboxBwrap {
		writeTree(tb, filepath.Join(dir, "forges-through-proc-mem"), goFiles(tb, filepath.Join(subs, "forges-through-proc-mem"), false))
		want["forges-through-proc-mem"] = expect{lab: 1, score: "0"}
	}
	for name, sub := range jailAttacks(tb, root, tag) {
		writeTree(tb, filepath.Join(dir, name), sub.files)
		want[name] = sub.want
	}
	return want
}

// jailAttack is a submission that attacks the jail a test binary runs
// in, and what it must score.
type jailAttack struct {
	files map[string][]byte
	want  expect
}

// jailAttacks are the submissions that try the jail's limits: filling
// /tmp (a tmpfs in the sandbox, RAM) and the run's directory (the disk),
// which the disk limit stops in init (0); spinning every core while each
// case hangs, for the run's whole time limit (0), while the honest
// submissions graded beside it must still score what they score; and a
// correct store (100) whose init detaches a copy of its test binary with
// setsid, which a second later tries to write under /tmp, $HOME and the
// kit checkout: no process of it may outlive its run (lateWrites lists
// the files that must never appear).
func jailAttacks(tb testing.TB, root, tag string) map[string]jailAttack {
	tb.Helper()
	claimSol := goFiles(tb, filepath.Join(root, "solutions", "01-claim"), false)
	withSol := func(name, src string) map[string][]byte {
		files := map[string][]byte{name: []byte(src)}
		for n, d := range claimSol {
			files[n] = d
		}
		return files
	}
	fill := func(dir string) string {
		return fmt.Sprintf(`package claim

import (
	"fmt"
	"os"
	"time"
)

// init writes 1 MiB files until it cannot, then waits.
func init() {
	chunk := make([]byte, 1<<20)
	for i := 0; ; i++ {
		if err := os.WriteFile(fmt.Sprintf("%%s/fill%%d", %s, i), chunk, 0o644); err != nil {
			break
		}
	}
	for {
		time.Sleep(time.Hour)
	}
}
`, dir)
	}
	var late []string
	for _, p := range lateWrites(tb, root, tag) {
		late = append(late, strconv.Quote(p))
	}
	return map[string]jailAttack{
		"fills-tmp":  {withSol("hostile.go", fill("os.TempDir()")), expect{lab: 1, score: "0", limit: "disk"}},
		"fills-disk": {withSol("hostile.go", fill(`"."`)), expect{lab: 1, score: "0", limit: "disk"}},
		"cpu-hog": {map[string][]byte{"claim.go": []byte(`package claim

import (
	"context"
	"errors"
	"runtime"
)

var ErrInProgress = errors.New("in progress")

type Store struct{}

func New() *Store { return &Store{} }

// init spins four goroutines per CPU, forever.
func init() {
	for i := 0; i < 4*runtime.NumCPU(); i++ {
		go func() {
			n := 0
			for {
				n++
			}
		}()
	}
}

// Do spins too, and never returns: every case runs to its budget.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	n := 0
	for {
		n++
	}
}
`)}, expect{lab: 1, score: "0"}},
		"setsid-rewrite": {withSol("hostile.go", fmt.Sprintf(`package claim

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// init starts a copy of the test binary in a session of its own, which
// waits a second (the run is over by then) and writes, and stays.
func init() {
	if os.Getenv("LABKIT_DETACHED") != "" {
		time.Sleep(time.Second)
		for _, p := range []string{%s} {
			os.WriteFile(p, []byte("package claimsuite\n\nfunc init() { panic(\"rewritten after the run\") }\n"), 0o644)
		}
		for {
			time.Sleep(time.Hour)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", %q)
	cmd.Env = append(os.Environ(), "LABKIT_DETACHED=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Start()
}
`, strings.Join(late, ", "), tag)), expect{lab: 1, score: "0"}}, // refused before the build: lab 01 allows neither os/exec nor syscall (grader's TestDetachedChildDies checks the layer beneath)
	}
}

// lateWrites are the files the setsid-rewrite submission's detached
// process writes a second after its start, when it is still alive.
func lateWrites(tb testing.TB, root, tag string) []string {
	tb.Helper()
	home, _ := os.UserHomeDir()
	return []string{"/tmp/" + tag + "-late", filepath.Join(home, tag+"-late"), filepath.Join(root, "suites", "claimsuite", tag+"_late.go")}
}

// survivors lists the processes whose command line holds tag (on Linux;
// nil elsewhere).
func survivors(tb testing.TB, tag string) []int {
	tb.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(cmdline, []byte(tag)) {
			out = append(out, pid)
		}
	}
	return out
}

// checkNothingSurvived fails when a process of the class is left, and,
// a little over a second later, when one of lateWrites appeared.
func checkNothingSurvived(t *testing.T, root, tag string) {
	t.Helper()
	if left := survivors(t, tag); len(left) > 0 {
		for _, pid := range left {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
		t.Errorf("processes %v of the class outlived the grading", left)
	}
	time.Sleep(1500 * time.Millisecond)
	for _, p := range lateWrites(t, root, tag) {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("a detached process wrote %s after its run", p)
		}
	}
}

// TestHostileClass is the acceptance test of class grading, as an
// instructor would try it: a class of solutions, starters, catalogued
// mistakes and hostile submissions graded over every lab in one command.
// Every score must be the expected one, the kit checkout must be unchanged,
// nothing of the run may be left under the temporary directory or $HOME,
// and the reference solution still scores 100 afterwards. It takes minutes,
// so it runs when LABKIT_CLASS=1 (.ci/run and make bench set it);
// LABKIT_CLASS_JOBS sets --jobs.
func TestHostileClass(t *testing.T) {
	if os.Getenv("LABKIT_CLASS") == "" {
		t.Skip("set LABKIT_CLASS=1 to grade the hostile class (minutes)")
	}
	root := kitRoot(t)
	tag := fmt.Sprintf("labkit-hostile-%d", time.Now().UnixNano())
	class := t.TempDir()
	want := buildClass(t, root, class, tag)
	out := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the grader's scratch space, checked empty afterwards
	before := treeHash(t, root)
	home, _ := os.UserHomeDir()

	// --timeout bounds each submission's lab, reruns included: the one that
	// hangs once needs the case budget (10s) and a second run.
	args := []string{"grade", class, "--out", out, "--timeout", "30s", "--memory", "512", "--disk", "64"}
	if j := os.Getenv("LABKIT_CLASS_JOBS"); j != "" {
		args = append(args, "--jobs", j)
	}
	start := time.Now()
	r := labctl(t, root, args...)
	took := time.Since(start)
	if r.code != 1 {
		t.Errorf("grade: exit %d, want 1 (some submissions cannot be graded)\n%s", r.code, r.stderr)
	}
	runs := checkGrades(t, out, want)
	checkNothingSurvived(t, root, tag)
	jobs := os.Getenv("LABKIT_CLASS_JOBS")
	if jobs == "" {
		jobs = "default"
	}
	t.Logf("graded %d submissions (%d lab runs) over %d labs in %.1fs with --jobs %s: %.2fs per submission-lab",
		len(want), runs, len(course.Built()), took.Seconds(), jobs, took.Seconds()/float64(max(runs, 1)))

	if n := os.Getenv("LABKIT_CLASS_SHARDS"); n != "" {
		checkShardedMerge(t, root, class, out, args[2:], n)
	}

	// In CI the checkout is a fresh clone nobody else writes to.
	if changed := changedFiles(before, treeHash(t, root)); len(changed) > 0 {
		t.Errorf("the kit checkout changed while grading: %v", changed)
	}
	for _, p := range []string{"/tmp/" + tag, filepath.Join(home, tag), filepath.Join(root, "suites", "claimsuite", tag+".go")} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			if sb, _, _ := grader.ResolveSandbox("auto"); sb == grader.SandboxBwrap {
				t.Errorf("a submission wrote %s", p)
			}
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the grader left %d entries in its scratch space %s (%s, ...)", len(left), tmp, left[0].Name())
	}

	again := t.TempDir()
	writeTree(t, filepath.Join(again, "reference"), goFiles(t, filepath.Join(root, "solutions", "01-claim"), false))
	r = labctl(t, root, "grade", "1", again, "--out", filepath.Join(again, "out"))
	if r.code != 0 {
		t.Fatalf("second grading of the reference: exit %d\n%s", r.code, r.stderr)
	}
	if row := readGradebook(t, filepath.Join(again, "out"))["reference"]; row[3] != "100" {
		t.Errorf("second grading of the reference solution: %v, want 100", row)
	}

	// Without bubblewrap, as on Gradescope's docker: the launcher's jail
	// (Landlock where the kernel has it, nobody when root, a PID namespace
	// or the sweep of nobody's processes) must hold the same attacks.
	plain := t.TempDir()
	plainWant := map[string]expect{"reference": {lab: 1, score: "100"}}
	writeTree(t, filepath.Join(plain, "reference"), goFiles(t, filepath.Join(root, "solutions", "01-claim"), false))
	for name, sub := range jailAttacks(t, root, tag) {
		if name != "cpu-hog" { // the run's whole time limit, for nothing new here
			writeTree(t, filepath.Join(plain, name), sub.files)
			plainWant[name] = sub.want
		}
	}
	if os.Geteuid() == 0 {
		// nobody passes through TMPDIR's parent, t.TempDir's own, to
		// reach the scratch space.
		if err := os.Chmod(filepath.Dir(tmp), 0o711); err != nil {
			t.Fatal(err)
		}
	}
	plainOut := filepath.Join(plain, "out")
	r = labctl(t, root, "grade", "1", plain, "--out", plainOut, "--sandbox", "off", "--timeout", "30s", "--disk", "64")
	if r.code != 0 {
		t.Errorf("grading without bwrap: exit %d, want 0\n%s", r.code, r.stderr)
	}
	checkGrades(t, plainOut, plainWant)
	checkNothingSurvived(t, root, tag)
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the grader left %d entries in its scratch space %s without bwrap (%s, ...)", len(left), tmp, left[0].Name())
	}
}

// checkGrades checks the grades in out against want, and returns how many
// lab runs it checked.
func checkGrades(t *testing.T, out string, want map[string]expect) int {
	t.Helper()
	book := readGradebook(t, out)
	if len(book) != len(want) {
		t.Errorf("gradebook has %d students, want %d", len(book), len(want))
	}
	runs := 0
	for name, e := range want {
		row, ok := book[name]
		if !ok {
			t.Errorf("%s is not in the gradebook", name)
			continue
		}
		var rep gradebook.StudentReport
		data, err := os.ReadFile(filepath.Join(out, row[1], "report.json"))
		if err != nil || json.Unmarshal(data, &rep) != nil {
			t.Errorf("%s: no report.json: %v", name, err)
			continue
		}
		if e.lab == 0 {
			if rep.Error == "" {
				t.Errorf("%s: graded (%s), want not graded with a reason", name, row[2])
			}
			continue
		}
		var lab *gradebook.StudentLabJSON
		for i := range rep.Labs {
			if rep.Labs[i].Lab == e.lab {
				lab = &rep.Labs[i]
			}
		}
		if lab == nil || lab.Report == nil {
			t.Errorf("%s: lab %d was not graded: %+v", name, e.lab, lab)
			continue
		}
		runs++
		got := lab.Report
		switch e.score {
		case "100":
			if got.Score() != got.Total {
				t.Errorf("%s: lab %d scored %d/%d (%s), want %d", name, e.lab, got.Score(), got.Total, lab.Status, got.Total)
			}
		case "0":
			if got.Score() != 0 {
				t.Errorf("%s: lab %d scored %d/%d, want 0", name, e.lab, got.Score(), got.Total)
			}
		case "<100":
			if got.Score() >= got.Total {
				t.Errorf("%s: lab %d scored %d/%d, want it caught", name, e.lab, got.Score(), got.Total)
			}
		default:
			if want, err := strconv.Atoi(e.score); err == nil && got.Score() != want {
				t.Errorf("%s: lab %d scored %d/%d, want %d", name, e.lab, got.Score(), got.Total, want)
			}
		}
		if e.concept != "" && !slices.Contains(got.FailedConcepts(), e.concept) {
			t.Errorf("%s: failing concepts %v, want %s among them", name, got.FailedConcepts(), e.concept)
		}
		if e.tampered != (got.Tampered != "") {
			t.Errorf("%s: tampered %q, want tampered %v", name, got.Tampered, e.tampered)
		}
		if e.limit != "" && !strings.HasPrefix(got.Limit, e.limit) {
			t.Errorf("%s: limit %q, want the %s limit", name, got.Limit, e.limit)
		}
		if e.check != nil {
			e.check(t, filepath.Join(out, row[1]))
		}
	}
	return runs
}

// leakCopy is lab 01's actor-style store from the suite's own test file in
// the full checkout at root, made a submission: every declaration but the
// tests, the imports it still uses, and three lines naming New, Store and
// ErrInProgress.
func leakCopy(tb testing.TB, root string) []byte {
	tb.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(root, "suites", "claimsuite", "claimsuite_test.go"), nil, parser.ParseComments)
	if err != nil {
		tb.Fatalf("the full checkout's claimsuite_test.go: %v", err)
	}
	var decls []ast.Decl
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "Test") {
			continue
		}
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			continue
		}
		decls = append(decls, d)
	}
	used := map[string]bool{}
	for _, d := range decls {
		ast.Inspect(d, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					used[id.Name] = true
				}
			}
			return true
		})
	}
	var b bytes.Buffer
	b.WriteString("package claim\n\nimport (\n")
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if used[filepath.Base(path)] {
			fmt.Fprintf(&b, "\t%q\n", path)
		}
	}
	b.WriteString(")\n\n")
	for _, d := range decls {
		if err := printer.Fprint(&b, fset, d); err != nil {
			tb.Fatal(err)
		}
		b.WriteString("\n\n")
	}
	b.WriteString("type Store = actorStore\n\nfunc New() *Store { return newActorStore() }\n\nvar ErrInProgress = errInProgress\n")
	if !bytes.Contains(b.Bytes(), []byte("func newActorStore()")) {
		tb.Fatalf("claimsuite_test.go has no newActorStore any more; the release-leak copy needs another source")
	}
	return b.Bytes()
}

// permissiveMarkdown renders Markdown as a lenient platform might (GFM,
// raw HTML kept), so that anything not fenced or escaped shows.
var permissiveMarkdown = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(goldmarkhtml.WithUnsafe()))

// renderedAsText checks that a student's feedback.md and every test panel
// of results.json render with no heading, table, HTML or bold text of
// their code's making: what the code printed is shown as code.
func renderedAsText(tb testing.TB, dir string) {
	tb.Helper()
	md, err := os.ReadFile(filepath.Join(dir, "feedback.md"))
	if err != nil {
		tb.Errorf("%s: %v", dir, err)
		return
	}
	docs := map[string]string{"feedback.md": string(md)}
	var gs gradebook.GradescopeResults
	data, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	if err := json.Unmarshal(data, &gs); err != nil {
		tb.Errorf("%s/results.json: %v", dir, err)
	}
	docs["results.json output"] = gs.Output
	for _, tc := range gs.Tests {
		docs["results.json test "+tc.Name] = tc.Output
	}
	if !strings.Contains(string(md), "# 100/100") {
		tb.Errorf("%s/feedback.md does not show what the code printed", dir)
	}
	code := regexp.MustCompile(`(?s)<pre><code[^>]*>.*?</code></pre>|<code>.*?</code>`)
	for name, doc := range docs {
		var page bytes.Buffer
		if err := permissiveMarkdown.Convert([]byte(doc), &page); err != nil {
			tb.Fatal(err)
		}
		html := code.ReplaceAllString(page.String(), "")
		for _, re := range []string{`<h[1-6][^>]*>[^<]*(100/100|Every case passes)`, `<table`, `<strong>100/100`} {
			if m := regexp.MustCompile(re).FindString(html); m != "" {
				tb.Errorf("%s: %s renders the code's output as markup: %q", dir, name, m)
			}
		}
	}
}

// checkShardedMerge grades class again as n shards (each from scratch, no
// cache), merges them with labctl gradebook merge, and requires the
// gradebook to be byte for byte that of the one-machine grading in out
// (the other files it lists where they differ). .ci/class.sh runs it with
// LABKIT_CLASS_SHARDS=2.
func checkShardedMerge(t *testing.T, root, class, out string, flags []string, n string) {
	t.Helper()
	count, err := strconv.Atoi(n)
	if err != nil || count < 1 {
		t.Fatalf("LABKIT_CLASS_SHARDS=%q: want a number of shards", n)
	}
	var shards []string
	start := time.Now()
	for i := 1; i <= count; i++ {
		dir := filepath.Join(t.TempDir(), "shard")
		args := append([]string{"grade", class, "--out", dir, "--shard", fmt.Sprintf("%d/%d", i, count)}, flags[2:]...)
		if r := labctl(t, root, args...); r.code > 1 {
			t.Fatalf("grade --shard %d/%d: exit %d\n%s", i, count, r.code, r.stderr)
		}
		shards = append(shards, dir)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if r := labctl(t, root, append([]string{"gradebook", "merge", "--out", merged}, shards...)...); r.code != 0 {
		t.Fatalf("gradebook merge: exit %d\n%s", r.code, r.stderr)
	}
	// The scores, the LMS import, must be the one machine's byte for
	// byte. The other files may differ where a hostile submission's case
	// ends another way on another run (crashed rather than timed out
	// while a CPU hog runs beside it), never in points; that every file
	// of a class whose outcomes are stable merges byte for byte is
	// TestClassOperations' to show.
	one, got := hashOutputs(t, out), hashOutputs(t, merged)
	var differ []string
	for f, h := range one {
		if got[f] != h {
			differ = append(differ, f)
		}
	}
	for f := range got {
		if _, ok := one[f]; !ok {
			differ = append(differ, f)
		}
	}
	sort.Strings(differ)
	if slices.Contains(differ, "gradebook.csv") {
		a, _ := os.ReadFile(filepath.Join(out, "gradebook.csv"))
		b, _ := os.ReadFile(filepath.Join(merged, "gradebook.csv"))
		if why := gradebooksAgree(a, b); why != "" {
			t.Errorf("the merge of %d shards has another gradebook.csv than one machine: %s\none machine:\n%s\nmerged:\n%s", count, why, a, b)
		} else {
			t.Logf("the merge of %d shards has another gradebook.csv than one machine, only in the scores of submissions that fail on both: a check on real concurrency (a race, a concurrent history) may catch a wrong program in more cases on one run than on another, never a correct one", count)
		}
	}
	if len(differ) > 0 {
		t.Logf("the merge of %d shards differs from one machine outside the scores in %d file(s): %v", count, len(differ), differ)
		for _, f := range differ {
			if strings.HasSuffix(f, "feedback.md") {
				a, _ := os.ReadFile(filepath.Join(out, f))
				b, _ := os.ReadFile(filepath.Join(merged, f))
				t.Logf("%s (%d bytes on one machine, %d merged), one machine then merged, from the first line that differs:\n%q\n----\n%q", f, len(a), len(b), fromFirstDifference(string(a), string(b)), fromFirstDifference(string(b), string(a)))
				break
			}
		}
	} else {
		t.Logf("the merge of %d shards (graded in %.1fs) is byte for byte the one-machine grading: %d files", count, time.Since(start).Seconds(), len(one))
	}
}

// fromFirstDifference is a's lines from the first one that b does not
// have at the same place, at most five of them.
func fromFirstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range al {
		if i >= len(bl) || al[i] != bl[i] {
			return strings.Join(al[i:min(i+5, len(al))], "\n")
		}
	}
	return ""
}

// gradebooksAgree compares two gradebook.csv files of one class and says
// how they disagree, or "" when they agree: the same rows and columns, the
// same value in every cell, except that a lab's score may differ where it
// is below the lab's points on both sides (a wrong program caught in more
// cases on one run, by a check on real concurrency), and then that row's
// total and final may differ too. A submission that earns full points on
// one side must earn them on the other: a correct program's verdict never
// varies.
func gradebooksAgree(a, b []byte) string {
	ra, err := csv.NewReader(bytes.NewReader(a)).ReadAll()
	if err != nil {
		return "one machine's gradebook: " + err.Error()
	}
	rb, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return "the merged gradebook: " + err.Error()
	}
	if len(ra) != len(rb) || len(ra) == 0 || !slices.Equal(ra[0], rb[0]) {
		return fmt.Sprintf("%d rows against %d, or other columns", len(ra), len(rb))
	}
	head := ra[0]
	labPoints := regexp.MustCompile(`^lab \d+ \((\d+)\)$`)
	for i := 1; i < len(ra); i++ {
		x, y := ra[i], rb[i]
		if len(x) != len(head) || len(y) != len(head) {
			return fmt.Sprintf("row %d has another number of cells", i+1)
		}
		varied := false
		for j, col := range head {
			if x[j] == y[j] {
				continue
			}
			if m := labPoints.FindStringSubmatch(col); m != nil {
				full, _ := strconv.Atoi(m[1])
				sx, errx := strconv.Atoi(x[j])
				sy, erry := strconv.Atoi(y[j])
				if errx == nil && erry == nil && sx < full && sy < full {
					varied = true
					continue
				}
			}
			if varied && (col == "total" || col == "final") {
				continue
			}
			return fmt.Sprintf("row %d (%s), column %q: %q on one machine, %q merged", i+1, x[0], col, x[j], y[j])
		}
	}
	return ""
}

// TestGradebooksAgree checks the shard comparison: identical books agree;
// a wrong program's lab score may differ below full points, with its total
// and final; a full score against a lower one, or any other cell, does not.
func TestGradebooksAgree(t *testing.T) {
	const head = "student,folder,status,lab 01 (100),total,max,final\n"
	book := func(rows ...string) []byte { return []byte(head + strings.Join(rows, "\n") + "\n") }
	for _, tt := range []struct {
		name   string
		a, b   []byte
		agrees bool
	}{
		{"identical", book("ann,ann,graded,100,100,100,100", "bob,bob,graded,80,80,100,80"), book("ann,ann,graded,100,100,100,100", "bob,bob,graded,80,80,100,80"), true},
		{"a wrong program caught in more cases", book("bob,bob,graded,80,80,100,80"), book("bob,bob,graded,76,76,100,76"), true},
		{"a correct program's score varies", book("ann,ann,graded,100,100,100,100"), book("ann,ann,graded,96,96,100,96"), false},
		{"another status", book("bob,bob,graded,80,80,100,80"), book("bob,bob,void,80,80,100,80"), false},
		{"a total alone differs", book("bob,bob,graded,80,80,100,80"), book("bob,bob,graded,80,81,100,80"), false},
		{"a row missing", book("ann,ann,graded,100,100,100,100", "bob,bob,graded,80,80,100,80"), book("ann,ann,graded,100,100,100,100"), false},
	} {
		if why := gradebooksAgree(tt.a, tt.b); (why == "") != tt.agrees {
			t.Errorf("%s: gradebooksAgree = %q, want agreement %v", tt.name, why, tt.agrees)
		}
	}
}
