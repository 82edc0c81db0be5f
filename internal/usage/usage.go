// Package usage is the error of bad input to a labctl command: an unknown
// lab, a bad flag, no kit checkout. labctl prints its one-line message and
// exits with status 2; the packages that hold the commands' bodies return
// it so that labctl can tell it from a failure of the work itself.
package usage

import "fmt"

// Error is bad input, with the one line labctl prints for it.
type Error struct{ Msg string }

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

// Errorf formats a usage error's message as fmt.Sprintf does.
func Errorf(format string, args ...any) error {
	return &Error{fmt.Sprintf(format, args...)}
}
