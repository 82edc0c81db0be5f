package grader

import "syscall"

// groupAttrs starts the test binary in a process group of its own, so that
// killGroup reaches everything it spawns, and has the kernel kill it if the
// grader dies first.
func groupAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
