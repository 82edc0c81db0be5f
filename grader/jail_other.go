//go:build !linux

package grader

import (
	"os"
	"os/exec"
	"path/filepath"
)

// pidNamespaces reports whether the grader can start a process in a PID
// namespace of its own: only on Linux.
var pidNamespaces = func() bool { return false }

// landlockABI is the Landlock ABI version of the kernel: 0, not Linux.
var landlockABI = func() int { return 0 }

// plainJail runs the binary itself in a process group of its own, within
// nothing but the limits the grader polls: Landlock, PID namespaces and
// the launcher are Linux's.
func plainJail(s runSpec, lim Limits) (*jail, error) {
	s.notes.add("not Linux: without bubblewrap the test binary runs as the grader's user, unconfined (no Landlock, no PID namespace): it can read what the grader can and leave processes behind")
	cmd := exec.Command(s.binary, s.args...)
	runDir := filepath.Join(s.workDir, "run")
	cmd.Dir = runDir
	cmd.Env = s.env
	cmd.SysProcAttr = groupAttrs()
	return &jail{cmd: cmd, after: func() {}, release: func() {}, disk: func() (int64, bool) { return dirUsage(runDir), true }}, nil
}

// openSandboxDisk cannot reach the sandbox's tmpfs: there is no bubblewrap here.
func openSandboxDisk(pid int) *os.File { return nil }

// openWaitingSandboxDisk: there is no bubblewrap outside Linux.
func openWaitingSandboxDisk(pid int, disk int64) *os.File { return nil }

// fsUsed is not measured outside Linux.
func fsUsed(f *os.File) (int64, bool) { return 0, false }

// cgroupJail: cgroups are Linux's.
func cgroupJail(j *jail, lim Limits) { j.noCgroup = "not Linux" }

// autogroupEnabled: the autogroup scheduler is Linux's.
func autogroupEnabled() bool { return false }
