//go:build unix && !linux

package grader

import "syscall"

// groupAttrs starts the test binary in a process group of its own, so that
// killGroup reaches everything it spawns. (Only Linux can also tie its life
// to the grader's; elsewhere the grader's own kill does that job.)
func groupAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
