package task

// Fencing tokens (lab 06): a lock service whose every grant carries a number
// larger than any earlier grant of the same resource, and a store that
// remembers, per key, the highest number it has accepted and refuses a
// write that carries a lower one. Lab 08 fences its checkpoint writes with
// them, and the capstone's lease grants carry one.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// FencingToken is the number a lock service gives one grant of a lock, and
// which the grant's holder sends with every write to the resource the lock
// protects. Every grant of a resource gets a larger token than every
// earlier grant of that resource, re-grants after an expiry or a release
// included, so a resource that has seen token 34 knows that a write with
// token 33 comes from a holder whose lease has ended. Tokens are ordered;
// they are not secret and not random. The zero token is never granted: it
// is what a write carries when its writer was never given one.
type FencingToken uint64

// DefaultLockTTL is how long a lock lasts when LockOptions.TTL is zero.
const DefaultLockTTL = 30 * time.Second

// The errors of a lock service and of a fenced store, matched with
// errors.Is.
var (
	// ErrLockHeld means the resource is held: an earlier grant of it has
	// not expired and has not been released. Try again later.
	ErrLockHeld = errors.New("lock held")

	// ErrLockLost means the grant is not the current grant of its resource
	// any more, or never was: it expired (even if nobody has acquired the
	// resource since), it was released, or the resource was granted again.
	ErrLockLost = errors.New("lock lost")

	// ErrInvalidTTL means a lock service was configured with a negative
	// TTL.
	ErrInvalidTTL = errors.New("invalid lock TTL")

	// ErrStaleToken means a fenced store refused a write: its token is
	// lower than the highest token the key has accepted, or it is zero.
	// The writer's lease has ended; it must stop and must not retry the
	// write with the same token.
	ErrStaleToken = errors.New("stale fencing token")
)

// LockOptions configure a lock service.
type LockOptions struct {
	// TTL is how long a grant lasts from the Acquire that makes it. Zero
	// means DefaultLockTTL; less than zero is ErrInvalidTTL.
	TTL time.Duration
}

// Grant is one grant of a lock: Holder holds Resource until Expires, and
// sends Token with every write to what the lock protects.
type Grant struct {
	Resource string       // what the lock protects, "report.txt"
	Holder   string       // who asked for it, "worker A"
	Token    FencingToken // larger than every earlier grant's of Resource

	// Expires is when the grant ends by itself. It holds while the lock
	// service's clock is before Expires; at Expires the resource is free.
	Expires time.Time
}

// String renders the grant for timelines: "report.txt to worker A, token 33".
func (g Grant) String() string {
	return fmt.Sprintf("%s to %s, token %d", g.Resource, g.Holder, g.Token)
}

// LockService grants leases on named resources, each with a fencing token.
// Its methods are safe for concurrent use, never wait for a lock to become
// free, and return an error wrapping ctx.Err() when ctx is done, having
// changed nothing.
type LockService interface {
	// Acquire grants resource to holder for the service's TTL, with a
	// token larger than every earlier grant's of resource; ErrLockHeld
	// while an earlier grant holds, whoever its holder.
	Acquire(ctx context.Context, resource, holder string) (Grant, error)

	// Release ends g at once, so the resource is free; ErrLockLost when g
	// is not the current grant of its resource.
	Release(ctx context.Context, g Grant) error
}

// FencedLease is a lease of a task (lab 05) with the fencing token of its
// grant: what a queue that fences its workers hands out. Lease.Token is
// the delivery's opaque receipt, for Extend, Ack and Nack; Fence orders the
// delivery among all deliveries of the task, for the writes its holder
// makes to a FencedStore. No lab's queue hands these out: lab 06 passes
// the token to FencedStore on its own, and the capstone keeps its own token
// in its Lease.
type FencedLease struct {
	Lease
	Fence FencingToken
}

// String renders the lease for timelines: "task-1 to w1 (attempt 2), fence 34".
func (l FencedLease) String() string {
	return fmt.Sprintf("%s, fence %d", l.Lease, l.Fence)
}

// FencedValue is what a fenced store holds for a key: the value of the
// write it accepted last, and that write's token.
type FencedValue struct {
	Value string
	Token FencingToken
}

// String renders the value for timelines: `"B's report" (token 34)`.
func (v FencedValue) String() string {
	return fmt.Sprintf("%q (token %d)", v.Value, v.Token)
}

// KV is plain storage: one FencedValue per key, kept for a fenced store.
// Each call is atomic on its own and nothing more: KV has no conditional
// write, so a store that reads a key's token with Get and writes with Put
// must make sure nobody writes the key in between. Either call can fail;
// both return an error wrapping ctx.Err() when ctx is done.
type KV interface {
	// Get returns what key holds, and false when nothing was ever put.
	Get(ctx context.Context, key string) (FencedValue, bool, error)

	// Put replaces what key holds with v. When it returns nil, v is
	// stored; when it returns an error, v may or may not be.
	Put(ctx context.Context, key string, v FencedValue) error
}

// FencedStore is a resource protected by fencing tokens: it keeps, per key,
// a value and the token of the write that stored it, in a KV, and refuses
// a write whose token is lower than the key's. Its methods are safe for
// concurrent use and return an error wrapping ctx.Err() when ctx is done,
// having changed nothing, and an error wrapping the KV's when a KV call
// fails.
type FencedStore interface {
	// Write stores value under key if token is at least the highest token
	// key has accepted, and not zero; ErrStaleToken otherwise. The check
	// and the write are one atomic step.
	Write(ctx context.Context, token FencingToken, key, value string) error

	// Read returns what key holds, and false when no write to it was ever
	// accepted.
	Read(ctx context.Context, key string) (FencedValue, bool, error)
}
