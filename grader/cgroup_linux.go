package grader

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroupControllers are the cgroup v2 controllers a run's limits need.
var cgroupControllers = []string{"memory", "pids", "cpu"}

// cgroupParent is the cgroup v2 directory each run gets a cgroup under,
// or "" and why there is none. It is found once.
var cgroupParent = sync.OnceValues(func() (string, string) {
	return findCgroupParent("/proc/self/mountinfo", "/proc/self/cgroup", os.Getpid())
})

// findCgroupParent finds the grader's own cgroup v2 (from the mountinfo
// and cgroup files of the process pid) and makes it a parent for runs: it
// must offer the memory, pids and cpu controllers, and when they are not
// yet enabled for its children the grader moves itself into a leaf of its
// own, labkit-grader-PID, and enables them (a cgroup with processes in it
// cannot have controlled children). Anything missing makes it "" and the
// reason.
func findCgroupParent(mountinfo, selfCgroup string, pid int) (string, string) {
	mi, err := os.ReadFile(mountinfo)
	if err != nil {
		return "", "cannot read the mount table: " + err.Error()
	}
	mnt, mntRoot := "", ""
	for _, line := range strings.Split(string(mi), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(g) >= 1 && g[0] == "cgroup2" {
			mnt, mntRoot = f[4], f[3]
			break
		}
	}
	if mnt == "" {
		return "", "no cgroup v2 hierarchy is mounted"
	}
	cg, err := os.ReadFile(selfCgroup)
	if err != nil {
		return "", "cannot read the grader's cgroup: " + err.Error()
	}
	rel := ""
	for _, line := range strings.Split(string(cg), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	if rel == "" {
		return "", "the grader is in no cgroup v2"
	}
	if mntRoot != "/" {
		rel = strings.TrimPrefix(rel, mntRoot)
	}
	dir := filepath.Join(mnt, rel)
	have, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	for _, c := range cgroupControllers {
		if !hasWord(have, c) {
			return "", fmt.Sprintf("the grader's cgroup v2 (%s) is not delegated the %s controllers", dir, strings.Join(cgroupControllers, ", "))
		}
	}
	enabled, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	ready := true
	for _, c := range cgroupControllers {
		ready = ready && hasWord(enabled, c)
	}
	if ready {
		return dir, ""
	}
	leaf := filepath.Join(dir, fmt.Sprintf("labkit-grader-%d", pid))
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", "cannot make a cgroup: " + err.Error()
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return "", "cannot move the grader into its own cgroup: " + err.Error()
	}
	ctl := "+" + strings.Join(cgroupControllers, " +")
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(ctl), 0o644); err != nil {
		return "", fmt.Sprintf("cannot enable the %s controllers in %s (other processes share the grader's cgroup?): %v", strings.Join(cgroupControllers, ", "), dir, err)
	}
	return dir, ""
}

func hasWord(list []byte, w string) bool {
	for _, f := range bytes.Fields(list) {
		if string(f) == w {
			return true
		}
	}
	return false
}

// runCgroup is the cgroup v2 of one run of a test binary: the kernel
// holds its memory (tmpfs pages included), processes and CPU share, and
// kills all of it at the end, whatever sessions or groups it made.
type runCgroup struct {
	dir string
	f   *os.File // the directory, for CLONE_INTO_CGROUP
}

var runCgroups atomic.Int64

// newRunCgroup makes a cgroup for one run under parent, with lim's memory
// (no swap) and process limits and the default CPU weight, the same as
// every other run's: a submission that spins every core gets the share of
// one.
func newRunCgroup(parent string, lim Limits) (*runCgroup, error) {
	dir := filepath.Join(parent, fmt.Sprintf("labkit-run-%d-%d", os.Getpid(), runCgroups.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	c := &runCgroup{dir: dir}
	for _, kv := range [][2]string{
		{"memory.max", strconv.FormatInt(lim.Memory, 10)},
		{"memory.swap.max", "0"},
		{"pids.max", strconv.Itoa(lim.Threads)},
		{"cpu.weight", "100"},
	} {
		if err := os.WriteFile(filepath.Join(dir, kv[0]), []byte(kv[1]), 0o644); err != nil && !(kv[0] == "memory.swap.max" && errors.Is(err, os.ErrNotExist)) {
			c.remove()
			return nil, fmt.Errorf("%s: %w", kv[0], err)
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		c.remove()
		return nil, err
	}
	c.f = f
	return c, nil
}

// attach makes cmd start in the cgroup.
func (c *runCgroup) attach(attr *syscall.SysProcAttr) {
	attr.UseCgroupFD = true
	attr.CgroupFD = int(c.f.Fd())
}

// limitHit names the limit the kernel enforced on the run, "" when none:
// an OOM kill (memory) or a fork refused (processes).
func (c *runCgroup) limitHit(lim Limits) string {
	if c.event("memory.events", "oom_kill") > 0 {
		return fmt.Sprintf("memory (%d MiB)", lim.Memory>>20)
	}
	if c.event("pids.events", "max") > 0 {
		return fmt.Sprintf("threads and processes (%d)", lim.Threads)
	}
	return ""
}

// cpu is the CPU time the run's processes used.
func (c *runCgroup) cpu() time.Duration {
	return time.Duration(c.event("cpu.stat", "usage_usec")) * time.Microsecond
}

// event reads the counter key of a flat-keyed cgroup file.
func (c *runCgroup) event(file, key string) int64 {
	data, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == key {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// kill kills every process in the cgroup: cgroup.kill (Linux 5.14), or
// each process it lists until it lists none.
func (c *runCgroup) kill() {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0o644); err == nil {
		c.waitEmpty()
		return
	}
	for i := 0; i < 100; i++ {
		procs, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
		if err != nil || len(bytes.TrimSpace(procs)) == 0 {
			return
		}
		for _, p := range bytes.Fields(procs) {
			if pid, err := strconv.Atoi(string(p)); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitEmpty waits (up to a second) for the cgroup's processes to be gone.
func (c *runCgroup) waitEmpty() {
	for i := 0; i < 100; i++ {
		if c.event("cgroup.events", "populated") == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// remove closes and removes the cgroup.
func (c *runCgroup) remove() {
	if c.f != nil {
		c.f.Close()
	}
	for i := 0; i < 50; i++ {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
