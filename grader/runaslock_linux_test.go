package grader_test

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
)

// sweeping is set while this process holds a user's lock exclusively.
var sweeping atomic.Bool

// holdRunAs takes, until the test ends, a lock on the user the test's
// binaries run as, shared by every process on this machine: shared for a
// run as that user, exclusive for a test that makes the grader sweep
// (kill) every process of the user. Without it, two runs of the kit's
// tests at once (make test beside make quick) kill each other's binaries.
func holdRunAs(tb testing.TB, user string, exclusive bool) {
	tb.Helper()
	if user == "" || (!exclusive && sweeping.Load()) {
		return // this process's sweeping test holds it already
	}
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "labkit-test-runas-"+user+".lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		tb.Fatalf("lock the run-as user %s: %v", user, err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		tb.Fatalf("lock the run-as user %s: %v", user, err)
	}
	if exclusive {
		sweeping.Store(true)
	}
	tb.Cleanup(func() {
		if exclusive {
			sweeping.Store(false)
		}
		f.Close() // and the lock with it
	})
}
