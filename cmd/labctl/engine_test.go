package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
)

// TestEngineRunsTheView: labctl engine builds ops/'s view and hands it its
// arguments and its exit status: a status of an empty namespace, and a bad
// flag, which is the view's own usage error (exit 2).
func TestEngineRunsTheView(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ops/ (client_golang)")
	}
	root := kitRoot(t)
	if _, err := os.Stat(filepath.Join(root, "ops", "go.mod")); err != nil {
		t.Skip("no ops/ module in this kit")
	}
	kit := copyKit(t)
	m := miniredis.RunT(t)
	r := labctl(t, kit, "engine", "status", "--redis", m.Addr(), "--namespace", "labkit:empty")
	if strings.Contains(r.stderr, "dial tcp") && strings.Contains(r.stderr, "proxy") {
		t.Skipf("ops/'s modules cannot be downloaded here:\n%s", r.stderr)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "labkit:empty") {
		t.Errorf("labctl engine status on an empty namespace: exit %d, stdout %q, stderr %q; want 0 and the namespace named", r.code, r.stdout, r.stderr)
	}
	if r := labctl(t, kit, "engine", "status", "--bogus"); r.code != 2 || !strings.Contains(r.stderr, "bogus") {
		t.Errorf("labctl engine status --bogus: exit %d, stderr %q; want the view's exit 2 naming the flag", r.code, r.stderr)
	}
}

// TestEngineDemoNeedsTheFullKit: in a kit without solutions/ (a student
// release), engine demo says so in one line and exits 2.
func TestEngineDemoNeedsTheFullKit(t *testing.T) {
	kit := copyKit(t)
	if err := os.RemoveAll(filepath.Join(kit, "solutions")); err != nil {
		t.Fatal(err)
	}
	r := labctl(t, kit, "engine", "demo")
	if r.code != 2 || !strings.Contains(r.stderr, "not in a student release") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Errorf("labctl engine demo without solutions/: exit %d, stderr %q; want 2 and one line saying it needs the full kit", r.code, r.stderr)
	}
}
