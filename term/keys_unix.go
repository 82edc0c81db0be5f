//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package term

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// KeysWithoutEnter puts the terminal f in a mode where each key press is
// read at once and not echoed, while Ctrl-C still interrupts and output
// is still processed (the terminal's "cbreak" mode, not raw mode, which
// would stop a newline returning the carriage). It returns the function
// that restores the terminal's mode.
func KeysWithoutEnter(f *os.File) (restore func(), err error) {
	fd := int(f.Fd())
	saved, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, fmt.Errorf("term: reading the terminal's mode: %w", err)
	}
	mode := *saved
	mode.Lflag &^= unix.ICANON | unix.ECHO
	mode.Cc[unix.VMIN], mode.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &mode); err != nil {
		return nil, fmt.Errorf("term: setting the terminal's mode: %w", err)
	}
	return func() { unix.IoctlSetTermios(fd, ioctlSetTermios, saved) }, nil
}
