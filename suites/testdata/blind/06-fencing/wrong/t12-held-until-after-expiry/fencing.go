// Package fencing is a lock service whose grants carry fencing tokens, and
// the store they protect, which refuses the writes of a holder whose lease
// has ended.
//
// Lab 06: fencing tokens against zombie workers. Read README.md in this
// directory first, then make `go run ./cmd/labctl check 6` pass.
//
// The scenario: workers take a lock on a resource before they write to it.
// A lock is a lease: it ends by itself when its TTL runs out, so a crashed
// worker cannot hold a resource forever. But a worker that is only paused
// (a garbage-collection pause, a stalled VM, a slow network) does not know
// that its lease ended. It wakes up and writes, after another worker was
// granted the same lock and wrote. The lock service cannot stop that write;
// only the resource can. So every grant carries a number larger than every
// earlier grant's, the holder sends it with each write, and the store
// refuses a write whose number is lower than the highest it has accepted.
package fencing

import (
	"github.com/fourth-outcome/labkit/task"
)

// The types the lock service and the store share with the suite and the
// later labs. They are defined in package task and re-exported here. Do
// not change them.

// FencingToken is the number of one grant: larger than every earlier
// grant's of the same resource. Zero is never granted.
type FencingToken = task.FencingToken

// Grant is one grant of a lock: Holder holds Resource until Expires, with
// Token.
type Grant = task.Grant

// FencedValue is what the store holds for a key: a value and the token of
// the write that stored it.
type FencedValue = task.FencedValue

// KV is the plain storage a Store keeps its values and tokens in: Get and
// Put, each atomic on its own, with no conditional write.
type KV = task.KV

// Options configure a Locks.
type Options = task.LockOptions

// DefaultTTL is how long a grant lasts when Options.TTL is zero.
const DefaultTTL = task.DefaultLockTTL

// The errors of Locks and Store, matched with errors.Is.
var (
	ErrLockHeld   = task.ErrLockHeld
	ErrLockLost   = task.ErrLockLost
	ErrInvalidTTL = task.ErrInvalidTTL
	ErrStaleToken = task.ErrStaleToken
)
