package grader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCgroupFS writes a mount table and a /proc/self/cgroup naming a
// cgroup v2 hierarchy under a temporary directory, the grader's cgroup
// at /a/b offering controllers, and returns the two files and the
// cgroup's directory.
func fakeCgroupFS(t *testing.T, controllers string) (mountinfo, self, dir string) {
	t.Helper()
	base := t.TempDir()
	mnt := filepath.Join(base, "cgroup")
	dir = filepath.Join(mnt, "a", "b")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		filepath.Join(base, "mountinfo"):             "25 30 0:22 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n40 30 0:37 / " + mnt + " rw,relatime - cgroup2 cgroup2 rw\n",
		filepath.Join(base, "self-cgroup"):           "4:memory:/x\n0::/a/b\n",
		filepath.Join(dir, "cgroup.controllers"):     controllers + "\n",
		filepath.Join(dir, "cgroup.subtree_control"): "",
	}
	for p, data := range files {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(base, "mountinfo"), filepath.Join(base, "self-cgroup"), dir
}

func readTrim(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

func TestFindCgroupParentMovesTheGraderAndEnablesControllers(t *testing.T) {
	mi, self, dir := fakeCgroupFS(t, "cpuset cpu io memory hugetlb pids")
	got, why := findCgroupParent(mi, self, 4242)
	if got != dir || why != "" {
		t.Fatalf("findCgroupParent() = %q, %q; want %q", got, why, dir)
	}
	if p := readTrim(t, filepath.Join(dir, "labkit-grader-4242", "cgroup.procs")); p != "4242" {
		t.Errorf("grader leaf cgroup.procs = %q, want 4242", p)
	}
	if c := readTrim(t, filepath.Join(dir, "cgroup.subtree_control")); c != "+memory +pids +cpu" {
		t.Errorf("cgroup.subtree_control = %q, want +memory +pids +cpu", c)
	}
}

func TestFindCgroupParentNeedsTheControllers(t *testing.T) {
	mi, self, _ := fakeCgroupFS(t, "hugetlb")
	if got, why := findCgroupParent(mi, self, 1); got != "" || !strings.Contains(why, "not delegated") {
		t.Errorf("findCgroupParent() = %q, %q; want none, not delegated", got, why)
	}
	if err := os.WriteFile(mi, []byte("25 30 0:22 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, why := findCgroupParent(mi, self, 1); got != "" || !strings.Contains(why, "no cgroup v2") {
		t.Errorf("findCgroupParent() without cgroup2 = %q, %q; want none, no cgroup v2", got, why)
	}
}

func TestRunCgroupLimitsAndEvents(t *testing.T) {
	parent := t.TempDir()
	cg, err := newRunCgroup(parent, Limits{Memory: 1 << 30, Threads: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cg.f.Close() })
	for file, want := range map[string]string{"memory.max": "1073741824", "memory.swap.max": "0", "pids.max": "100", "cpu.weight": "100"} {
		if got := readTrim(t, filepath.Join(cg.dir, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	lim := Limits{Memory: 1 << 30, Threads: 100}
	if hit := cg.limitHit(lim); hit != "" {
		t.Errorf("limitHit() with no events = %q, want none", hit)
	}
	os.WriteFile(filepath.Join(cg.dir, "pids.events"), []byte("max 3\n"), 0o644)
	if hit := cg.limitHit(lim); hit != "threads and processes (100)" {
		t.Errorf("limitHit() after a refused fork = %q, want the threads limit", hit)
	}
	os.WriteFile(filepath.Join(cg.dir, "memory.events"), []byte("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n"), 0o644)
	if hit := cg.limitHit(lim); hit != "memory (1024 MiB)" {
		t.Errorf("limitHit() after an OOM kill = %q, want the memory limit", hit)
	}
	os.WriteFile(filepath.Join(cg.dir, "cpu.stat"), []byte("usage_usec 2500000\nuser_usec 2000000\n"), 0o644)
	if got := cg.cpu().String(); got != "2.5s" {
		t.Errorf("cpu() = %s, want 2.5s", got)
	}
}
