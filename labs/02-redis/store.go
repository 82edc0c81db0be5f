// Package redis runs a piece of work at most once per idempotency key,
// with its records in Redis, so that a claim outlives the process that took
// it and is shared by every process that talks to the same server.
//
// Lab 02: a durable claim store on Redis SET NX. Read README.md in this
// directory first, then make `go run ./cmd/labctl check 2` pass.
//
// The scenario: the signing workers of lab 01 now run as several processes,
// deployed and restarted all day. An in-memory map protects nothing across
// processes and is gone after a restart, so the records move to Redis, and
// the store serves many customers (tenants) at once.
package redis

import (
	"context"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Limits on a tenant and an idempotency key, in bytes. Both must also be
// non-empty and free of NUL bytes; any other byte is allowed.
const (
	MaxTenantLen = 128
	MaxKeyLen    = 256
)

// Defaults for the zero values of Options.
const (
	DefaultClaimTTL  = time.Minute
	DefaultRetention = 24 * time.Hour
)

// ErrInProgress is returned (wrapped) by Claim and Do when another caller
// holds the claim on the same key and has not finished. It is neither a
// success nor a failure: the caller should ask again later, not execute.
var ErrInProgress = errors.New("redisclaim: work for this key is in progress")

// ErrFingerprintMismatch is returned (wrapped) by Claim and Do when the key
// is already used by a request with a different fingerprint. Nothing runs;
// reusing a key for a different request is a bug in the caller.
var ErrFingerprintMismatch = errors.New("redisclaim: idempotency key reused for a different request")

// ErrInvalidKey is returned (wrapped) when a tenant or key is empty, too
// long or contains a NUL byte. Nothing is sent to Redis.
var ErrInvalidKey = errors.New("redisclaim: invalid tenant or idempotency key")

// ErrClaimLost is returned (wrapped) by Complete and Release when the claim
// is no longer the caller's: it expired, and perhaps another caller has
// claimed the key since. Nothing is changed.
var ErrClaimLost = errors.New("redisclaim: claim expired or taken over by another caller")

// ErrNotImplemented is what the unfinished starter returns. Delete it when
// everything works.
var ErrNotImplemented = errors.New("redisclaim: not implemented yet (TODO in labs/02-redis/store.go)")

// Options configures a Store.
type Options struct {
	// Prefix starts every Redis key the store writes, so that several
	// applications (or test runs) can share one database.
	Prefix string
	// ClaimTTL is how long a pending claim lasts. It must be longer than the
	// work normally takes, and it bounds how long a key stays locked after
	// its owner crashed. Zero means DefaultClaimTTL.
	ClaimTTL time.Duration
	// Retention is how long a completed record is kept and replayed to
	// duplicates. Make it longer than the longest plausible retry delay.
	// Zero means DefaultRetention.
	Retention time.Duration
}

// Store is an idempotency store on Redis. Any number of Store values, in any
// number of processes, may share one server: they see the same records. A
// Store must be safe for concurrent use.
type Store struct {
	rdb  goredis.UniversalClient
	opts Options
	// TODO: anything else a Store needs. Remember that the records
	// themselves must live in Redis.
}

// New returns a Store that keeps its records on rdb. rdb must not be nil;
// its timeouts bound how long a call waits for an unreachable server.
func New(rdb goredis.UniversalClient, opts Options) *Store {
	// TODO: apply the defaults documented on Options.
	return &Store{rdb: rdb, opts: opts}
}

// Claim is what the one caller that won a key holds: it must run the work
// and then Complete or Release the claim. Token is unique to this claim; it
// is how the store tells this claim from a later one on the same key.
type Claim struct {
	Tenant      string
	Key         string
	Fingerprint string
	Token       string
}

// Record is what Claim found when the key's work has already completed.
type Record struct {
	Done   bool   // the work completed; Result is its stored value
	Result string // the value the work returned
}

// Claim tries to claim key for tenant, for a request whose fingerprint (a
// hash of what the request asks for) is given.
//
//   - If the key is free, the caller now holds it: Claim returns the claim
//     and a zero Record. The claim expires after Options.ClaimTTL unless it
//     is completed or released first.
//   - If the key's work has completed, Claim returns a zero Claim and a
//     Record with Done set and the stored Result.
//   - If another caller holds the key, Claim returns an error wrapping
//     ErrInProgress.
//   - If the key is held or completed for a different fingerprint, it
//     returns an error wrapping ErrFingerprintMismatch.
//   - An invalid tenant or key gives an error wrapping ErrInvalidKey.
func (s *Store) Claim(ctx context.Context, tenant, key, fingerprint string) (Claim, Record, error) {
	// TODO: implement. Start with the README's "What to implement".
	return Claim{}, Record{}, ErrNotImplemented
}

// Complete stores result as the outcome of the claim's work; duplicates get
// it for Options.Retention. If the claim is no longer held (it expired, and
// perhaps someone else claimed the key), nothing changes and the error
// wraps ErrClaimLost.
func (s *Store) Complete(ctx context.Context, c Claim, result string) error {
	// TODO: implement.
	return ErrNotImplemented
}

// Release gives the claim up, so that the next caller for the key runs the
// work. If the claim is no longer held, nothing changes and the error wraps
// ErrClaimLost.
func (s *Store) Release(ctx context.Context, c Claim) error {
	// TODO: implement.
	return ErrNotImplemented
}

// Do runs work at most once per (tenant, key) and returns its result.
//
//   - The caller that claims the key runs work. On success the result is
//     stored and returned; if storing it fails (the claim was lost, or Redis
//     is gone) Do returns the value together with that error. On failure the
//     claim is released and work's error is returned (joined with the
//     release's error, if releasing failed too).
//   - A duplicate of a completed key gets the stored value and a nil error.
//   - Otherwise Do returns Claim's error (ErrInProgress,
//     ErrFingerprintMismatch, ErrInvalidKey or a Redis error) and does not
//     run work.
func (s *Store) Do(ctx context.Context, tenant, key, fingerprint string, work func(ctx context.Context) (string, error)) (string, error) {
	// TODO: implement, on top of Claim, Complete and Release.
	return "", ErrNotImplemented
}
