package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/gradebook"
)

// TestReleaseBuildsWithoutSolutions writes the student release and proves
// that it builds, that every starter fails in it for the right reason, and
// that no solution code is in it.
func TestReleaseBuildsWithoutSolutions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release and checks every lab")
	}
	root := kitRoot(t)
	rel := filepath.Join(t.TempDir(), "release")
	if r := labctl(t, root, "release", "--out", rel); r.code != 0 {
		t.Fatalf("release: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := labctl(t, root, "release", "--out", rel); r.code != 2 || !strings.Contains(r.stderr, "not empty") {
		t.Errorf("release into a non-empty folder: exit %d, %q; want 2 and not empty", r.code, r.stderr)
	}

	// No solution code: no solutions/, no patch, no correct fixture, and
	// no file with the contents of a reference solution's file.
	banned := map[[32]byte]string{}
	filepath.WalkDir(filepath.Join(root, "solutions"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil // the shims are the same in labs/ and solutions/
		}
		data, _ := os.ReadFile(p)
		banned[sha256.Sum256(data)] = p
		return nil
	})
	filepath.WalkDir(rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(rel, p)
		if d.IsDir() && (r == "solutions" || d.Name() == "mistakes" || (d.Name() == "correct" && filepath.Base(filepath.Dir(p)) == "testdata")) {
			t.Errorf("release has %s/", r)
		}
		if strings.HasSuffix(p, ".patch") {
			t.Errorf("release has the patch %s", r)
		}
		if !d.IsDir() {
			data, _ := os.ReadFile(p)
			if src, ok := banned[sha256.Sum256(data)]; ok {
				t.Errorf("release file %s is a copy of %s", r, src)
			}
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(rel, "RELEASE.md")); err != nil {
		t.Errorf("release has no RELEASE.md: %v", err)
	}

	// labctl builds in the release (-trimpath: its packages compile to the
	// same cache entries as in the kit, so only what differs is rebuilt).
	build := exec.Command("go", "build", "-trimpath", "-o", os.DevNull, "./cmd/labctl")
	build.Dir = rel
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/labctl in the release: %v\n%s", err, out)
	}
	// So do docs --serve's server and the operator's view of the engine
	// (its own module, ops/, without the demo that runs the solution).
	for _, b := range []struct{ dir, pkgs string }{{".", "./cmd/docserve"}, {"ops", "./..."}} {
		build := exec.Command("go", "build", "-trimpath", "-o", os.DevNull, b.pkgs)
		if b.dir == "ops" {
			build = exec.Command("go", "vet", b.pkgs) // several packages: vet builds them all
		}
		build.Dir = filepath.Join(rel, b.dir)
		build.Env = append(os.Environ(), "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			if b.dir == "ops" && (strings.Contains(string(out), "dial tcp") || strings.Contains(string(out), "proxy")) {
				t.Logf("ops/ in the release not checked: its modules cannot be downloaded here:\n%s", out)
				continue
			}
			t.Errorf("%s in %s of the release: %v\n%s", build.Args, b.dir, err, out)
		}
	}
	// Every starter, graded in the release by the release's own labctl,
	// fails each case with its not-implemented error.
	class := t.TempDir()
	for _, l := range course.Built() {
		writeTree(t, filepath.Join(class, "starter-"+l.Dir), prefixed("labs/"+l.Dir+"/", goFiles(t, filepath.Join(rel, "labs", l.Dir), false)))
	}
	out := t.TempDir()
	if r := labctl(t, rel, "grade", class, "--out", out); r.code != 0 {
		t.Fatalf("grade in the release: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, l := range course.Built() {
		var rep gradebook.StudentReport
		data, _ := os.ReadFile(filepath.Join(out, "starter-"+l.Dir, "report.json"))
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatalf("starter-%s/report.json: %v", l.Dir, err)
		}
		for _, lr := range rep.Labs {
			if lr.Lab != l.Number {
				continue
			}
			if lr.Report == nil || lr.Report.Build != nil || lr.Report.Score() != 0 {
				t.Errorf("starter %s in the release: %s, want it to build and score 0", l.Dir, lr.Status)
				continue
			}
			for _, c := range lr.Report.Cases {
				text := strings.ToLower(strings.Join(c.Output, "\n"))
				if c.Status != "skipped" && !strings.Contains(text, "not implemented") && !strings.Contains(text, "todo") {
					t.Errorf("starter %s case %s in the release: %s %q, want its not-implemented error", l.Dir, c.Name, c.Status, c.Output)
				}
			}
		}
	}
}

func TestReleaseUsage(t *testing.T) {
	root := kitRoot(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"release"}, "want --out DIR or --gradescope FILE.zip"},
		{[]string{"release", "--gradescope", filepath.Join(t.TempDir(), "a.tar")}, "ending in .zip"},
		{[]string{"release", "--gradescope", filepath.Join(root, "a.zip")}, "inside the kit"},
	} {
		r := labctl(t, root, tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("labctl %v: exit %d, stderr %q; want 2 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// TestReleaseIsReproducible: two releases of the same checkout give the
// same zip, byte for byte, and the same LABKIT_VERSION.
func TestReleaseIsReproducible(t *testing.T) {
	root := kitRoot(t)
	dir := t.TempDir()
	var zips [2][]byte
	for i := range zips {
		p := filepath.Join(dir, fmt.Sprintf("%d.zip", i))
		if r := labctl(t, root, "release", "--gradescope", p); r.code != 0 {
			t.Fatalf("release --gradescope: exit %d\n%s", r.code, r.stderr)
		}
		zips[i], _ = os.ReadFile(p)
	}
	if !bytes.Equal(zips[0], zips[1]) || len(zips[0]) == 0 {
		t.Errorf("two Gradescope zips of the same checkout differ (%d and %d bytes)", len(zips[0]), len(zips[1]))
	}
}
