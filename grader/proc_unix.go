//go:build unix

package grader

import "syscall"

// killGroup kills the process group led by pid: the test binary and
// anything it started.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// quit sends SIGQUIT to pid, which makes a Go program print every
// goroutine's stack and exit: how the grader learns where a hung case was.
// The runtime prints the stack of the goroutine that is running on the
// thread the signal lands on, and of a goroutine running on any other
// thread only "stack unavailable"; so where it can tell (Linux), quit
// sends the signal to the thread that is spinning, and a busy loop is
// shown at its line whichever thread the kernel would have picked.
func quit(pid int) error {
	if tid := spinningThread(pid); tid > 0 && signalThread(pid, tid, syscall.SIGQUIT) == nil {
		return nil
	}
	return syscall.Kill(pid, syscall.SIGQUIT)
}
