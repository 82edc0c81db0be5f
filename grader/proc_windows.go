package grader

import (
	"errors"
	"os"
	"syscall"
)

// groupAttrs has nothing to add on Windows, which has no process groups in
// the Unix sense; killGroup kills the test binary itself.
func groupAttrs() *syscall.SysProcAttr { return nil }

// killGroup kills the process pid.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// errNoQuit is quit's answer on Windows, which has no SIGQUIT: a hung case
// is then stopped without the goroutine dump that says where it was.
var errNoQuit = errors.New("no SIGQUIT on Windows")

// quit cannot ask a process for its stacks on Windows; see errNoQuit.
func quit(pid int) error { return errNoQuit }
