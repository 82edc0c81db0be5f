package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgFor: a command labctl prints is the way this run was invoked,
// from where the learner stands.
func TestProgFor(t *testing.T) {
	kit := t.TempDir()
	lab := filepath.Join(kit, "labs", "01-claim")
	bin := filepath.Join(kit, "bin", "labctl")
	elsewhere := filepath.Join(t.TempDir(), "labctl")
	goBuild := filepath.Join(os.TempDir(), "go-build1234", "b001", "exe", "labctl")
	notOnPath := func(string) (string, error) { return "", errors.New("not found") }
	tests := []struct {
		name, exe, wd, root string
		lookPath            func(string) (string, error)
		want                string
	}{
		{"go run from the root", goBuild, kit, kit, notOnPath, "go run ./cmd/labctl"},
		{"go run from a lab folder", goBuild, lab, kit, notOnPath, "go run ../../cmd/labctl"},
		{"go run outside a kit", goBuild, "", "", notOnPath, "go run ./cmd/labctl"},
		{"a test binary", "/tmp/x/labctl.test", lab, kit, notOnPath, "go run ../../cmd/labctl"},
		{"built binary from the root", bin, kit, kit, notOnPath, "./bin/labctl"},
		{"built binary from a lab folder", bin, lab, kit, notOnPath, "../../bin/labctl"},
		{"built binary outside the kit", elsewhere, lab, kit, notOnPath, elsewhere},
		{"the binary on PATH", bin, lab, kit, func(string) (string, error) { return bin, nil }, "labctl"},
		{"another labctl on PATH", bin, lab, kit, func(string) (string, error) { return elsewhere, nil }, "../../bin/labctl"},
	}
	for _, tt := range tests {
		if got := progFor(tt.exe, tt.wd, tt.root, tt.lookPath); got != tt.want {
			t.Errorf("%s: progFor(%q, %q, %q) = %q, want %q", tt.name, tt.exe, tt.wd, tt.root, got, tt.want)
		}
	}
}

// TestCommandsFromALabFolder: run from labs/01-claim/, every command
// labctl prints (the next step, the next hint, a usage error, help) is one
// that works there.
func TestCommandsFromALabFolder(t *testing.T) {
	kit := copyKit(t)
	lab := filepath.Join(kit, "labs", "01-claim")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, "`go run ../../cmd/labctl check 1`"},
		{[]string{"hint", "1"}, "`go run ../../cmd/labctl hint 1` shows level 2"},
		{[]string{"hint"}, "e.g. go run ../../cmd/labctl hint 1"},
		{[]string{"check", "--help"}, "usage: go run ../../cmd/labctl check"},
		{[]string{"help"}, "\tgo run ../../cmd/labctl <command> [arguments]"},
		{[]string{"interview", "--help"}, "| go run ../../cmd/labctl interview duplicates"},
		{[]string{"interview", "nope"}, "(go run ../../cmd/labctl interview list shows them)"},
	} {
		r := labctl(t, lab, tt.args...)
		out := r.stdout + r.stderr
		if !strings.Contains(out, tt.want) {
			t.Errorf("labctl %s in labs/01-claim: output lacks %q:\n%s", strings.Join(tt.args, " "), tt.want, out)
		}
		if strings.Contains(out, "`labctl ") || strings.Contains(out, "./cmd/labctl check") && !strings.Contains(out, "../../cmd/labctl check") {
			t.Errorf("labctl %s in labs/01-claim: a command that does not work there:\n%s", strings.Join(tt.args, " "), out)
		}
	}
}

// TestCompileErrorNamesTheLearnersFile: lab 01 is graded with a copy of
// the learner's file whose "sync" import is instrumented; a type error in
// it is shown at the learner's file and line, never at the copy in the
// user cache.
func TestCompileErrorNamesTheLearnersFile(t *testing.T) {
	kit := copyKit(t)
	lab, err := resolveLab("01")
	if err != nil {
		t.Fatal(err)
	}
	putTarget(t, kit, lab, "solution")
	file := filepath.Join(kit, "labs", lab.Dir, "claim.go")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `"sync"`) {
		t.Fatalf("the solution of lab 01 does not import sync: the test needs one that does")
	}
	lines := strings.Split(string(src), "\n")
	at := len(lines) - 1 // the error goes on the file's last line
	lines[at] = `var typeErr int = "x"`
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "1", "--quiet", "--md"}, {"check", "1", "--quiet"}} {
		r := labctl(t, kit, args...)
		want := fmt.Sprintf("labs/01-claim/claim.go:%d:19: cannot use", at+1)
		if !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "labkit/overlay") {
			t.Errorf("labctl %s with a type error on line %d: output lacks %q or names the cache copy:\n%s", strings.Join(args, " "), at+1, want, r.stdout)
		}
	}
}
