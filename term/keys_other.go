//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package term

import "os"

// KeysWithoutEnter returns ErrNoKeyMode: this system has no way the kit
// knows to read keys one at a time, so keys wait for Enter.
func KeysWithoutEnter(f *os.File) (restore func(), err error) {
	return nil, ErrNoKeyMode
}
