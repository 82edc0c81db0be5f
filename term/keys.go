package term

import "errors"

// ErrNoKeyMode is returned by KeysWithoutEnter where the system has no
// way to read keys one at a time.
var ErrNoKeyMode = errors.New("term: cannot read single keys on this system")
