// Package autograder holds the Gradescope pair (setup.sh, run_autograder)
// and the GitHub Classroom script; these tests run them on fake directory
// layouts, with the kit as labctl release --gradescope ships it.
package autograder

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fourth-outcome/labkit/course"
)

func kitRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// built is the Gradescope autograder as Gradescope gets it: the zip that
// labctl release --gradescope writes, unpacked, and the labctl built from
// the unpacked source as setup.sh builds it.
type built struct {
	dir    string // holds everything below; removed by TestMain
	zip    string
	size   int64
	source string // the unpacked zip: /autograder/source
	labctl string // built from source
}

var autograderZip = sync.OnceValues(func() (*built, error) {
	dir, err := os.MkdirTemp("", "labkit-autograder-test-")
	if err != nil {
		return nil, err
	}
	b := &built{dir: dir, zip: filepath.Join(dir, "autograder.zip"), source: filepath.Join(dir, "source"), labctl: filepath.Join(dir, "labctl")}
	run := func(wd string, name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Dir = wd
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return nil
	}
	kit, _ := filepath.Abs("..")
	if err := run(kit, "go", "run", "./cmd/labctl", "release", "--gradescope", b.zip); err != nil {
		return nil, err
	}
	fi, err := os.Stat(b.zip)
	if err != nil {
		return nil, err
	}
	b.size = fi.Size()
	if err := unzip(b.zip, b.source); err != nil {
		return nil, err
	}
	if err := run(b.source, "go", "build", "-o", b.labctl, "./cmd/labctl"); err != nil {
		return nil, err
	}
	return b, nil
})

// unzip extracts the zip at path into dir, keeping each entry's mode.
func unzip(path, dir string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		dst := filepath.Join(dir, filepath.FromSlash(f.Name))
		if !strings.HasPrefix(dst, dir+string(filepath.Separator)) {
			return fmt.Errorf("zip entry %q escapes the folder", f.Name)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, f.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if b, err := autograderZip(); err == nil {
		os.RemoveAll(b.dir)
	}
	os.Exit(code)
}

func autograder(tb testing.TB) *built {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds the Gradescope autograder zip and labctl from it")
	}
	b, err := autograderZip()
	if err != nil {
		tb.Fatalf("build the autograder: %v", err)
	}
	return b
}

// TestGradescopeZip checks what the autograder zip holds: the release (no
// solutions, no test file or test input outside labs/), setup.sh and
// run_autograder at its root and executable, the kit version and the
// fallback result; labctl built from it (autograder does that).
func TestGradescopeZip(t *testing.T) {
	b := autograder(t)
	zr, err := zip.OpenReader(b.zip)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	entries := map[string]*zip.File{}
	var testFiles []string
	for _, f := range zr.File {
		entries[f.Name] = f
		parts := strings.Split(f.Name, "/")
		switch {
		case parts[0] == "solutions":
			t.Errorf("the autograder zip holds %s", f.Name)
		case parts[0] == "labs":
		case strings.HasSuffix(f.Name, "_test.go") || strings.Contains("/"+f.Name, "/testdata/"):
			testFiles = append(testFiles, f.Name)
		}
	}
	if len(testFiles) > 0 {
		t.Errorf("the autograder zip holds %d test files or test inputs outside labs/: %v", len(testFiles), testFiles)
	}
	for _, name := range []string{"setup.sh", "run_autograder"} {
		if f := entries[name]; f == nil || f.Mode().Perm()&0o111 == 0 {
			t.Errorf("the zip's root has no executable %s", name)
		}
	}
	version, err := os.ReadFile(filepath.Join(b.source, "LABKIT_VERSION"))
	if err != nil || !strings.Contains(string(version), "(content ") {
		t.Errorf("LABKIT_VERSION = %q (%v), want the commit and the content hash", version, err)
	}
	var fallback struct {
		Score  *float64 `json:"score"`
		Output string   `json:"output"`
	}
	data, _ := os.ReadFile(filepath.Join(b.source, "results-unavailable.json"))
	if err := json.Unmarshal(data, &fallback); err != nil || fallback.Score == nil || *fallback.Score != 0 || !strings.Contains(fallback.Output, "labctl produced no result") {
		t.Errorf("results-unavailable.json = %s (%v), want score 0 and the reason", data, err)
	}
	var labs int
	for name := range entries {
		if strings.HasPrefix(name, "labs/") && strings.HasSuffix(name, "/README.md") {
			labs++
		}
	}
	t.Logf("autograder zip: %.2f MB, %d entries, %d labs", float64(b.size)/1e6, len(zr.File), labs)
}

// fakeAutograder makes Gradescope's layout: source (the unpacked zip),
// submission (the student's upload), results.
func fakeAutograder(tb testing.TB, b *built, files map[string][]byte) string {
	tb.Helper()
	root := tb.TempDir()
	if err := os.Symlink(b.source, filepath.Join(root, "source")); err != nil {
		tb.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(root, "submission", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

type results struct {
	Score        float64 `json:"score"`
	Output       string  `json:"output"`
	OutputFormat string  `json:"output_format"`
	Tests        []struct {
		Name     string  `json:"name"`
		Status   string  `json:"status"`
		MaxScore float64 `json:"max_score"`
	} `json:"tests"`
}

func (r results) maxScore() float64 {
	var sum float64
	for _, t := range r.Tests {
		sum += t.MaxScore
	}
	return sum
}

// runAutograder runs run_autograder (from the unpacked zip) on root and
// reads the results.json it wrote. Unless env says otherwise, the student's
// code runs as this test's user (STUDENT_USER empty): see
// TestDetachedProcessCannotRewriteResults for the dedicated user.
func runAutograder(tb testing.TB, b *built, root string, env ...string) results {
	tb.Helper()
	cmd := exec.Command("bash", filepath.Join(b.source, "run_autograder"))
	cmd.Env = append(os.Environ(), append([]string{"AUTOGRADER_ROOT=" + root, "STUDENT_USER=", "LABCTL=" + b.labctl}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("run_autograder: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(root, "results", "results.json"))
	if err != nil {
		tb.Fatalf("run_autograder wrote no results.json: %v\n%s", err, out)
	}
	var r results
	if err := json.Unmarshal(data, &r); err != nil {
		tb.Fatalf("results.json is not JSON: %v\n%s", err, data)
	}
	return r
}

// releaseWith is a copy of the release's labs/ (every starter), as a
// student uploads their whole repository, with files replaced.
func releaseWith(tb testing.TB, b *built, replace map[string][]byte) map[string][]byte {
	tb.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(filepath.Join(b.source, "labs"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(b.source, p)
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	for n, d := range replace {
		files[n] = d
	}
	return files
}

// TestRunAutograderGradesTheSubmission uploads a whole repository in which
// only lab 01 is done: it is graded out of lab 01's cases alone, scores
// 100, and the feedback names the kit version from LABKIT_VERSION (the
// zip has no .git).
func TestRunAutograderGradesTheSubmission(t *testing.T) {
	b := autograder(t)
	sol, err := os.ReadFile(filepath.Join(kitRoot(t), "solutions", "01-claim", "claim.go"))
	if err != nil {
		t.Fatal(err)
	}
	root := fakeAutograder(t, b, releaseWith(t, b, map[string][]byte{"labs/01-claim/claim.go": sol}))
	r := runAutograder(t, b, root)
	claim, _ := course.Find("1")
	if r.Score != 100 || r.maxScore() != 100 || len(r.Tests) != len(claim.Cases) || r.OutputFormat != "md" {
		t.Errorf("results.json = score %v of %v over %d tests, format %q; want 100 of 100 over lab 01's %d cases in md\n%s", r.Score, r.maxScore(), len(r.Tests), r.OutputFormat, len(claim.Cases), r.Output)
	}
	version, _ := os.ReadFile(filepath.Join(b.source, "LABKIT_VERSION"))
	if v := strings.TrimSpace(string(version)); v == "" || !strings.Contains(r.Output, v) {
		t.Errorf("the feedback does not name the kit version %q:\n%s", v, r.Output)
	}
	if fi, err := os.Stat(filepath.Join(root, "results")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("results folder: %v, %v; want mode 0755", fi.Mode(), err)
	}
}

// TestRunAutograderAlwaysWritesResults: a labctl that prints nothing gives
// the kit's fixed score-0 result; an upload with no lab gives labctl's
// score-0 result with the reason; LABS lists the labs asked for, each out
// of its points, present or not.
func TestRunAutograderAlwaysWritesResults(t *testing.T) {
	b := autograder(t)
	root := fakeAutograder(t, b, map[string][]byte{"claim.go": []byte("package claim\n")})
	r := runAutograder(t, b, root, "LABCTL=/bin/false")
	if r.Score != 0 || !strings.Contains(r.Output, "labctl produced no result") {
		t.Errorf("results.json with a broken labctl = %+v, want score 0 and the reason", r)
	}
	empty := fakeAutograder(t, b, map[string][]byte{"notes.txt": []byte("no code here")})
	r = runAutograder(t, b, empty)
	if r.Score != 0 || !strings.Contains(r.Output, "not graded") || !strings.Contains(r.Output, "no Go files for any lab") {
		t.Errorf("results.json without a lab = %+v, want score 0 and the reason", r)
	}
	r = runAutograder(t, b, empty, "LABS=1-2")
	if r.Score != 0 || r.maxScore() != 0 {
		// intake refuses a submission with no lab at all: no test is listed.
		t.Errorf("results.json without a lab, LABS=1-2 = score %v of %v, want 0 of 0 (not graded)", r.Score, r.maxScore())
	}
}

// stub writes an executable script into dir.
func stub(tb testing.TB, dir, name, body string) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/usr/bin/env bash\n"+body), 0o755); err != nil {
		tb.Fatal(err)
	}
}

// fakeGo writes a Go toolchain whose go command records its arguments in
// log and reports version, for a tarball or an installed Go.
func fakeGo(tb testing.TB, bin, version, log string) {
	tb.Helper()
	os.MkdirAll(bin, 0o755)
	stub(tb, bin, "go", `echo "go $*" >>`+log+`
case "$1" in
version) echo "go version go`+version+` linux/amd64" ;;
env) echo "go`+version+`" ;;
build) printf '#!/bin/sh\nexit 0\n' >"$3"; chmod +x "$3" ;;
esac
`)
}

// TestSetupFindsOrInstallsGo runs setup.sh with apt-get, curl, useradd and
// Go stubbed, nothing downloaded and nothing outside the test's folders
// changed: a recent enough Go on PATH is used as it is; with none, Go is
// installed into GO_ROOT; with an older Go in GO_ROOT, that one is left
// alone and Go goes into /autograder/go. run_autograder reads the choice
// from go.env.
func TestSetupFindsOrInstallsGo(t *testing.T) {
	tests := []struct {
		name          string
		pathGo        string // version of a go on PATH, "" for none
		goRootGo      string // version of a go already in GO_ROOT
		wantDownload  bool
		wantGoBinDir  string // relative to the test's folder
		wantUntouched string // a Go that must still be there, same version
	}{
		{name: "recent go on PATH", pathGo: "1.26.3", wantGoBinDir: "pathgo"},
		{name: "no go anywhere", wantDownload: true, wantGoBinDir: "usr/local/go/bin"},
		{name: "older go in GO_ROOT", goRootGo: "1.21.0", wantDownload: true, wantGoBinDir: "autograder/go/bin", wantUntouched: "usr/local/go/bin"},
		{name: "older go on PATH, none in GO_ROOT", pathGo: "1.25.9", wantDownload: true, wantGoBinDir: "usr/local/go/bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			bin := filepath.Join(tmp, "bin")
			os.MkdirAll(bin, 0o755)
			log := filepath.Join(tmp, "log")
			stub(t, bin, "apt-get", `echo "apt-get $*" >>`+log+"\n")
			stub(t, bin, "useradd", `echo "useradd $*" >>`+log+"\n")
			stub(t, bin, "id", `exit 1`+"\n") // the student user does not exist yet
			tarball := filepath.Join(tmp, "go.tar.gz")
			fakeGo(t, filepath.Join(tmp, "gosrc", "go", "bin"), "1.26.0", log)
			if out, err := exec.Command("tar", "-C", filepath.Join(tmp, "gosrc"), "-czf", tarball, "go").CombinedOutput(); err != nil {
				t.Fatalf("tar: %v %s", err, out)
			}
			stub(t, bin, "curl", `echo "curl $*" >>`+log+`
while [ $# -gt 0 ]; do if [ "$1" = -o ]; then cp `+tarball+` "$2"; fi; shift; done
`)
			path := bin + ":/usr/bin:/bin"
			if tt.pathGo != "" {
				fakeGo(t, filepath.Join(tmp, "pathgo"), tt.pathGo, log)
				path = filepath.Join(tmp, "pathgo") + ":" + path
			}
			goRoot := filepath.Join(tmp, "usr", "local", "go")
			if tt.goRootGo != "" {
				fakeGo(t, filepath.Join(goRoot, "bin"), tt.goRootGo, log)
			}
			root := filepath.Join(tmp, "autograder")
			os.MkdirAll(filepath.Join(root, "source", "labs", "01-claim"), 0o755)
			os.WriteFile(filepath.Join(root, "source", "go.mod"), []byte("module github.com/fourth-outcome/labkit\n\ngo 1.26.0\n"), 0o644)
			cmd := exec.Command("bash", filepath.Join(kitRoot(t), "autograder", "setup.sh"))
			cmd.Env = append(os.Environ(), "PATH="+path, "AUTOGRADER_ROOT="+root, "GO_ROOT="+goRoot, "GO_SEARCH=", "HOME="+tmp)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("setup.sh: %v\n%s", err, out)
			}
			logged, _ := os.ReadFile(log)
			for _, want := range []string{"apt-get install -y -qq ca-certificates curl gcc bubblewrap", "useradd --system", "labkit-student", "go build -o " + filepath.Join(root, "labctl") + " ./cmd/labctl", "go test -c -trimpath -vet=off -race"} {
				if !strings.Contains(string(logged), want) {
					t.Errorf("setup.sh did not run %q; it ran:\n%s", want, logged)
				}
			}
			if downloaded := strings.Contains(string(logged), "curl -fsSL https://go.dev/dl/go1.26.0.linux-amd64.tar.gz"); downloaded != tt.wantDownload {
				t.Errorf("setup.sh downloaded Go: %v, want %v\n%s", downloaded, tt.wantDownload, out)
			}
			env, _ := exec.Command("bash", "-c", `. "$1" && printf %s "$GO_BIN_DIR"`, "-", filepath.Join(root, "go.env")).Output()
			if want := filepath.Join(tmp, tt.wantGoBinDir); string(env) != want {
				t.Errorf("go.env sets GO_BIN_DIR=%q, want %q", env, want)
			}
			if _, err := os.Stat(filepath.Join(tmp, tt.wantGoBinDir, "go")); err != nil {
				t.Errorf("no go in %s: %v", tt.wantGoBinDir, err)
			}
			if tt.wantUntouched != "" {
				v, _ := exec.Command(filepath.Join(tmp, tt.wantUntouched, "go"), "version").Output()
				if !strings.Contains(string(v), tt.goRootGo) {
					t.Errorf("the Go in %s was replaced: it says %q", tt.wantUntouched, v)
				}
			}
		})
	}
}

// TestClassroomReportsPoints runs the GitHub Classroom script on a fake
// student repository, a release in which only lab 01 is done: the points
// are lab 01's alone.
func TestClassroomReportsPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds labctl and grades a submission")
	}
	kit := kitRoot(t)
	workflow, err := os.ReadFile(filepath.Join(kit, ".github", "workflows", "classroom.yml"))
	if err != nil || !strings.Contains(string(workflow), "autograder/classroom.sh") {
		t.Fatalf("classroom.yml does not run autograder/classroom.sh: %v", err)
	}
	student := t.TempDir()
	sol, _ := os.ReadFile(filepath.Join(kit, "solutions", "01-claim", "claim.go"))
	for _, l := range course.Built() {
		for _, name := range []string{"README.md"} {
			data, _ := os.ReadFile(filepath.Join(kit, "labs", l.Dir, name))
			os.MkdirAll(filepath.Join(student, "labs", l.Dir), 0o755)
			os.WriteFile(filepath.Join(student, "labs", l.Dir, name), data, 0o644)
		}
	}
	os.WriteFile(filepath.Join(student, "labs", "01-claim", "claim.go"), sol, 0o644)
	os.WriteFile(filepath.Join(student, "labs", "01-claim", "claim_test.go"), []byte("package claim\n"), 0o644)
	summary, output := filepath.Join(t.TempDir(), "summary"), filepath.Join(t.TempDir(), "output")
	cmd := exec.Command("bash", "classroom.sh", kit, student)
	cmd.Env = append(os.Environ(), "GITHUB_STEP_SUMMARY="+summary, "GITHUB_OUTPUT="+output)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("classroom.sh: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Points 100/100") {
		t.Errorf("classroom.sh output lacks Points 100/100:\n%s", out)
	}
	data, _ := os.ReadFile(output)
	enc, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "result=")
	raw, err := base64.StdEncoding.DecodeString(enc)
	var rep struct {
		Version  int     `json:"version"`
		Status   string  `json:"status"`
		MaxScore float64 `json:"max_score"`
	}
	if !ok || err != nil || json.Unmarshal(raw, &rep) != nil || rep.Version != 1 || rep.Status != "pass" || rep.MaxScore != 100 {
		t.Errorf("GITHUB_OUTPUT = %q, want result=<base64 of a passing version 1 report out of 100>", data)
	}
	if s, _ := os.ReadFile(summary); !strings.Contains(string(s), "## Points 100/100") {
		t.Errorf("job summary lacks the points:\n%s", s)
	}
	if strings.Contains(string(mustRead(t, filepath.Join(kit, "autograder", "classroom.sh"))), "python") {
		t.Errorf("classroom.sh still embeds Python; labctl makes every JSON")
	}
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// studentUser is the unprivileged user the tests that need root run the
// student's code as: LABKIT_TEST_STUDENT_USER names it. It must be a user
// of its own: run_autograder kills every process it has.
func studentUser(tb testing.TB) (name string, uid, gid int) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root: run_autograder runs the student's code as another user")
	}
	name = os.Getenv("LABKIT_TEST_STUDENT_USER")
	if name == "" {
		tb.Skip("set LABKIT_TEST_STUDENT_USER to an unprivileged user of its own (useradd --system labkit-student); run_autograder kills every process of it")
	}
	out, err := exec.Command("id", "-u", name).Output()
	if err != nil {
		tb.Fatalf("LABKIT_TEST_STUDENT_USER=%s: no such user: %v", name, err)
	}
	uid, _ = strconv.Atoi(strings.TrimSpace(string(out)))
	out, _ = exec.Command("id", "-g", name).Output()
	gid, _ = strconv.Atoi(strings.TrimSpace(string(out)))
	if uid == 0 {
		tb.Fatalf("LABKIT_TEST_STUDENT_USER=%s is root", name)
	}
	return name, uid, gid
}

// openDir is a new folder in the system's temporary directory with the
// given mode, reachable by every user (t.TempDir's parent is private),
// removed after the test.
func openDir(tb testing.TB, mode os.FileMode) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "labkit-autograder-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// alive reports whether a process with this pid exists and is no zombie.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestRunAutograderKillsTheStudentsProcesses stands in for a labctl that
// left a process of the student's user behind, detached with setsid and
// set to rewrite results.json: run_autograder must kill it before it
// writes results.json, and the results folder must be root's, so that it
// could not have written there anyway.
func TestRunAutograderKillsTheStudentsProcesses(t *testing.T) {
	b := autograder(t)
	user, uid, gid := studentUser(t)
	root := openDir(t, 0o755)
	if err := os.Symlink(b.source, filepath.Join(root, "source")); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(openDir(t, 0o777), "pid")
	// The stand-in labctl: starts the attacker as the student's user, then
	// prints a result of 0, as labctl grade --format gradescope would.
	fake := filepath.Join(t.TempDir(), "labctl")
	stub(t, filepath.Dir(fake), "labctl", fmt.Sprintf(`setpriv --reuid=%d --regid=%d --clear-groups -- setsid bash -c 'echo $$ >%s; while :; do echo "{\"score\": 100}" >%s/results/results.json 2>/dev/null; sleep 0.05; done' </dev/null >/dev/null 2>&1 &
for i in $(seq 100); do [ -s %s ] && break; sleep 0.05; done
echo '{"score": 0, "output": "graded", "tests": []}'
`, uid, gid, pidFile, root, pidFile))
	r := runAutograder(t, b, root, "STUDENT_USER="+user, "LABCTL="+fake)
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the stand-in attacker never started: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the detached process %d of %s outlived run_autograder", pid, user)
	}
	if r.Score != 0 || r.Output != "graded" {
		t.Errorf("results.json = %+v, want labctl's result, unchanged", r)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(root, "results"), &st); err != nil || st.Uid != 0 || st.Mode&0o022 != 0 {
		t.Errorf("results folder: uid %d, mode %o (%v); want root's, writable by root alone", st.Uid, st.Mode&0o777, err)
	}
}

// TestDetachedProcessCannotRewriteResults is the hostile submission of the
// Gradescope path without bubblewrap: its code detaches a process with
// setsid that keeps rewriting results.json to 100. With the student's code
// run as its own user (labctl grade --run-as), the process is gone when
// run_autograder exits and results.json keeps the grade. It needs root,
// LABKIT_TEST_STUDENT_USER and labctl grade --run-as; LABKIT_CLASS=1 runs
// it with the hostile class.
func TestDetachedProcessCannotRewriteResults(t *testing.T) {
	if os.Getenv("LABKIT_CLASS") == "" {
		t.Skip("set LABKIT_CLASS=1 to run the hostile class's Gradescope attack")
	}
	b := autograder(t)
	user, _, _ := studentUser(t)
	if help, _ := exec.Command(b.labctl, "grade", "-h").CombinedOutput(); !bytes.Contains(help, []byte("-run-as")) {
		t.Skip("labctl grade has no --run-as yet (the sandbox branch adds it): run this test again after the merge")
	}
	root := openDir(t, 0o755)
	tag := filepath.Join(openDir(t, 0o777), "attacker.pid")
	claim := fmt.Sprintf(`package claim

import (
	"context"
	"errors"
	"os"
)

var ErrInProgress = errors.New("in progress")

type Store struct{}

func New() *Store { return &Store{} }

func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	return "", errors.New("not implemented")
}

// init detaches a shell in a session of its own with nothing but package
// os (lab 01 refuses os/exec and syscall): setsid(1) does the detaching.
func init() {
	os.StartProcess("/usr/bin/setsid", []string{"setsid", "/bin/sh", "-c", "echo $$ >%s; while :; do echo '{\"score\": 100, \"tests\": []}' >%s/results/results.json; sleep 0.05; done"}, &os.ProcAttr{})
}
`, tag, root)
	if err := os.Symlink(b.source, filepath.Join(root, "source")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "submission"), 0o755)
	os.WriteFile(filepath.Join(root, "submission", "claim.go"), []byte(claim), 0o644)
	r := runAutograder(t, b, root, "STUDENT_USER="+user, "SANDBOX=off")
	data, err := os.ReadFile(tag)
	if err != nil {
		if got, _ := os.ReadFile(filepath.Join(root, "results", "results.json")); bytes.Contains(got, []byte(`"score": 100`)) {
			t.Fatalf("results.json was rewritten to 100: %s", got)
		}
		// Where the launcher's Landlock confines writes to the run's own
		// directory, the attacker cannot even record its pid outside it:
		// the attack is stopped before this test can watch it.
		t.Skipf("the submission's detached process left no pid file (%v): confined before it could be observed, or never started; results.json is unchanged", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the submission's detached process %d outlived run_autograder", pid)
	}
	if r.Score != 0 || len(r.Tests) == 0 {
		t.Errorf("results.json = score %v over %d tests, want the grade (0, every case listed), not the forgery", r.Score, len(r.Tests))
	}
}
