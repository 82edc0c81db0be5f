//go:build unix && !linux

package grader

import "syscall"

// groupAttrs starts the test binary in a process group of its own, so that
// killGroup reaches everything it spawns. (Only Linux can also tie its life
// to the grader's; elsewhere the grader's own kill does that job.)
func groupAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// spinningThread returns 0: without /proc there is no telling which
// thread spins, and quit signals the process.
func spinningThread(pid int) int { return 0 }

// signalThread is never called where spinningThread returns 0.
func signalThread(pid, tid int, sig syscall.Signal) error { return syscall.ENOSYS }
