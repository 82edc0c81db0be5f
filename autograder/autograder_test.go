// Package autograder holds the Gradescope pair (setup.sh, run_autograder)
// and the GitHub Classroom script; these tests run them on fake directory
// layouts.
package autograder

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func kitRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

var labctlBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "labkit-autograder-test-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "labctl")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/labctl").CombinedOutput()
	if err != nil {
		return "", &exec.ExitError{Stderr: out}
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := labctlBin(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

func buildLabctl(tb testing.TB) string {
	tb.Helper()
	bin, err := labctlBin()
	if err != nil {
		tb.Fatalf("build labctl: %v", err)
	}
	return bin
}

// fakeAutograder makes Gradescope's layout: source (the kit), submission
// (the student's upload), results.
func fakeAutograder(tb testing.TB, files map[string]string) string {
	tb.Helper()
	root := tb.TempDir()
	if err := os.Symlink(kitRoot(tb), filepath.Join(root, "source")); err != nil {
		tb.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(root, "submission", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
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
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"tests"`
}

func runAutograder(tb testing.TB, root string, env ...string) results {
	tb.Helper()
	cmd := exec.Command("bash", "run_autograder")
	cmd.Env = append(os.Environ(), append([]string{"AUTOGRADER_ROOT=" + root, "LABS=1"}, env...)...)
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

func TestRunAutograderGradesTheSubmission(t *testing.T) {
	sol, err := os.ReadFile(filepath.Join(kitRoot(t), "solutions", "01-claim", "claim.go"))
	if err != nil {
		t.Fatal(err)
	}
	root := fakeAutograder(t, map[string]string{"claim.go": string(sol)})
	r := runAutograder(t, root, "LABCTL="+buildLabctl(t))
	if r.Score != 100 || r.OutputFormat != "md" || len(r.Tests) == 0 {
		t.Errorf("results.json = score %v, format %q, %d tests; want 100 in md with tests\n%s", r.Score, r.OutputFormat, len(r.Tests), r.Output)
	}
}

func TestRunAutograderAlwaysWritesResults(t *testing.T) {
	root := fakeAutograder(t, map[string]string{"claim.go": "package claim\n"})
	r := runAutograder(t, root, "LABCTL=/bin/false")
	if r.Score != 0 || !strings.Contains(r.Output, "could not grade") {
		t.Errorf("results.json with a broken labctl = %+v, want score 0 and the reason", r)
	}
	empty := t.TempDir()
	r = runAutograder(t, empty, "LABCTL=/bin/false")
	if r.Score != 0 || !strings.Contains(r.Output, "no submission") {
		t.Errorf("results.json without a submission = %+v, want score 0 and the reason", r)
	}
}

// stub writes an executable script into dir.
func stub(tb testing.TB, dir, name, body string) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/usr/bin/env bash\n"+body), 0o755); err != nil {
		tb.Fatal(err)
	}
}

// TestSetupInstallsGo runs setup.sh with apt-get and curl stubbed: curl
// serves a Go "tarball" whose go command is a stub, so nothing is
// downloaded and nothing outside the test's directories changes.
func TestSetupInstallsGo(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	os.MkdirAll(bin, 0o755)
	log := filepath.Join(tmp, "log")
	stub(t, bin, "apt-get", `echo "apt-get $*" >>`+log+"\n")
	// The fake toolchain: go/bin/go records its arguments and, for
	// build -o, writes the binary.
	tarball := filepath.Join(tmp, "go.tar.gz")
	gosrc := filepath.Join(tmp, "gosrc", "go", "bin")
	os.MkdirAll(gosrc, 0o755)
	stub(t, gosrc, "go", `echo "go $*" >>`+log+`
case "$1" in
version) echo "go version go1.26.0 linux/amd64" ;;
build) printf '#!/bin/sh\nexit 0\n' >"$3"; chmod +x "$3" ;;
esac
`)
	if out, err := exec.Command("tar", "-C", filepath.Join(tmp, "gosrc"), "-czf", tarball, "go").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	stub(t, bin, "curl", `echo "curl $*" >>`+log+`
while [ $# -gt 0 ]; do if [ "$1" = -o ]; then cp `+tarball+` "$2"; fi; shift; done
`)
	root := filepath.Join(tmp, "autograder")
	os.MkdirAll(filepath.Join(root, "source", "labs", "01-claim"), 0o755)
	goRoot := filepath.Join(tmp, "usr", "local", "go")
	cmd := exec.Command("bash", "setup.sh")
	cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin", "AUTOGRADER_ROOT="+root, "GO_ROOT="+goRoot, "GO_VERSION=1.26.0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("setup.sh: %v\n%s", err, out)
	}
	logged, _ := os.ReadFile(log)
	for _, want := range []string{"apt-get install -y -qq ca-certificates curl gcc bubblewrap", "curl -fsSL https://go.dev/dl/go1.26.0.linux-amd64.tar.gz", "go build -o " + filepath.Join(root, "labctl") + " ./cmd/labctl", "go test -c -trimpath -vet=off -race"} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("setup.sh did not run %q; it ran:\n%s", want, logged)
		}
	}
	if _, err := os.Stat(filepath.Join(goRoot, "bin", "go")); err != nil {
		t.Errorf("Go was not installed in GO_ROOT: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "labctl")); err != nil {
		t.Errorf("labctl was not built: %v", err)
	}
}

// TestClassroomReportsPoints runs the GitHub Classroom script on a fake
// student repository holding the reference solution of lab 01.
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
	os.MkdirAll(filepath.Join(student, "labs", "01-claim"), 0o755)
	os.WriteFile(filepath.Join(student, "labs", "01-claim", "claim.go"), sol, 0o644)
	os.WriteFile(filepath.Join(student, "labs", "01-claim", "claim_test.go"), []byte("package claim\n"), 0o644)
	summary, output := filepath.Join(t.TempDir(), "summary"), filepath.Join(t.TempDir(), "output")
	cmd := exec.Command("bash", "classroom.sh", kit, student, "1")
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
		Status   string  `json:"status"`
		MaxScore float64 `json:"max_score"`
	}
	if !ok || err != nil || json.Unmarshal(raw, &rep) != nil || rep.Status != "pass" || rep.MaxScore != 100 {
		t.Errorf("GITHUB_OUTPUT = %q, want result=<base64 of a passing report out of 100>", data)
	}
	if s, _ := os.ReadFile(summary); !strings.Contains(string(s), "## Points 100/100") {
		t.Errorf("job summary lacks the points:\n%s", s)
	}
}
