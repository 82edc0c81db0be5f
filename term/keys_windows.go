package term

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// KeysWithoutEnter puts the console f in a mode where each key press is
// read at once and not echoed, while Ctrl-C still interrupts. It returns
// the function that restores the console's mode.
func KeysWithoutEnter(f *os.File) (restore func(), err error) {
	h := windows.Handle(f.Fd())
	var saved uint32
	if err := windows.GetConsoleMode(h, &saved); err != nil {
		return nil, fmt.Errorf("term: reading the console's mode: %w", err)
	}
	mode := saved &^ (windows.ENABLE_LINE_INPUT | windows.ENABLE_ECHO_INPUT)
	if err := windows.SetConsoleMode(h, mode); err != nil {
		return nil, fmt.Errorf("term: setting the console's mode: %w", err)
	}
	return func() { windows.SetConsoleMode(h, saved) }, nil
}
