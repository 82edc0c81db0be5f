// Package redis runs a piece of work at most once per idempotency key,
// with its records in Redis, so that a claim outlives the process that took
// it and is shared by every process that talks to the same server.
//
// This is the reference solution of lab 02. Lab 01's pattern is unchanged:
// the key is claimed before the work runs, a duplicate of a pending key is
// told "in progress", a duplicate of a completed key gets the stored result.
// What Redis adds is what makes it hold across processes and crashes:
//
//   - the claim is one command, SET key value NX PX ttl: Redis decides who was
//     first, and the claim can never exist without its expiry;
//   - every claim carries a unique token, and completing or releasing it is
//     one Lua script that acts only if the stored token is still this claim's;
//   - a completed record is kept for a retention window, then expires;
//   - the Redis key is built from the tenant and the idempotency key with a
//     length prefix, so tenants never share keys and no two pairs collide;
//   - the request's fingerprint is stored with the claim, and a key reused
//     for a different request is rejected.
package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
// Store is safe for concurrent use.
type Store struct {
	rdb  goredis.UniversalClient
	opts Options
}

// New returns a Store that keeps its records on rdb. rdb must not be nil;
// its timeouts bound how long a call waits for an unreachable server.
func New(rdb goredis.UniversalClient, opts Options) *Store {
	if opts.ClaimTTL <= 0 {
		opts.ClaimTTL = DefaultClaimTTL
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
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
	rkey, err := s.redisKey(tenant, key)
	if err != nil {
		return Claim{}, Record{}, err
	}
	c := Claim{Tenant: tenant, Key: key, Fingerprint: fingerprint, Token: rand.Text()}
	pending := encodePending(c.Token, fingerprint)
	// Two commands at most per round: the claim, and if it lost, a read of
	// the record that beat it. The record can expire between the two, so
	// the claim is tried again a few times before giving up.
	for range 3 {
		// The claim: set the key only if it does not exist, with its
		// expiry, in one command. Redis decides who was first.
		err := s.rdb.SetArgs(ctx, rkey, pending, goredis.SetArgs{Mode: "NX", TTL: s.opts.ClaimTTL}).Err()
		if err == nil {
			return c, Record{}, nil
		}
		if !errors.Is(err, goredis.Nil) {
			return Claim{}, Record{}, fmt.Errorf("claim %s: %w", describe(tenant, key), err)
		}
		v, err := s.rdb.Get(ctx, rkey).Result()
		if errors.Is(err, goredis.Nil) {
			continue // it expired just now: try to claim it again
		}
		if err != nil {
			return Claim{}, Record{}, fmt.Errorf("claim %s: read existing record: %w", describe(tenant, key), err)
		}
		rec, err := decode(v)
		if err != nil {
			return Claim{}, Record{}, fmt.Errorf("claim %s: %w", describe(tenant, key), err)
		}
		switch {
		case rec.fingerprint != fingerprint:
			return Claim{}, Record{}, fmt.Errorf("claim %s: %w", describe(tenant, key), ErrFingerprintMismatch)
		case rec.done:
			return Claim{}, Record{Done: true, Result: rec.result}, nil
		default:
			return Claim{}, Record{}, fmt.Errorf("claim %s: %w", describe(tenant, key), ErrInProgress)
		}
	}
	// The key keeps appearing and vanishing: others are claiming it.
	return Claim{}, Record{}, fmt.Errorf("claim %s: contended: %w", describe(tenant, key), ErrInProgress)
}

// completeScript stores the completed record, with the retention window as
// its TTL, if and only if the key still holds this claim's pending value
// (which contains the claim's unique token). The comparison and the write
// run on the server as one step: nothing can happen between them.
//
// KEYS[1] the record; ARGV[1] the pending value the claim wrote; ARGV[2] the
// completed record; ARGV[3] the retention window in milliseconds.
var completeScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)

// releaseScript deletes the record if and only if it still holds this
// claim's pending value. KEYS[1] the record; ARGV[1] the pending value.
var releaseScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
`)

// Complete stores result as the outcome of the claim's work; duplicates get
// it for Options.Retention. If the claim is no longer held (it expired, and
// perhaps someone else claimed the key), nothing changes and the error
// wraps ErrClaimLost.
func (s *Store) Complete(ctx context.Context, c Claim, result string) error {
	rkey, err := s.redisKey(c.Tenant, c.Key)
	if err != nil {
		return err
	}
	done := encodeDone(c.Token, c.Fingerprint, result)
	retention := strconv.FormatInt(max(s.opts.Retention.Milliseconds(), 1), 10)
	n, err := completeScript.Run(ctx, s.rdb, []string{rkey}, encodePending(c.Token, c.Fingerprint), done, retention).Int()
	if err != nil {
		return fmt.Errorf("complete %s: %w", describe(c.Tenant, c.Key), err)
	}
	if n == 0 {
		return fmt.Errorf("complete %s: %w", describe(c.Tenant, c.Key), ErrClaimLost)
	}
	return nil
}

// Release gives the claim up, so that the next caller for the key runs the
// work. If the claim is no longer held, nothing changes and the error wraps
// ErrClaimLost.
func (s *Store) Release(ctx context.Context, c Claim) error {
	rkey, err := s.redisKey(c.Tenant, c.Key)
	if err != nil {
		return err
	}
	n, err := releaseScript.Run(ctx, s.rdb, []string{rkey}, encodePending(c.Token, c.Fingerprint)).Int()
	if err != nil {
		return fmt.Errorf("release %s: %w", describe(c.Tenant, c.Key), err)
	}
	if n == 0 {
		return fmt.Errorf("release %s: %w", describe(c.Tenant, c.Key), ErrClaimLost)
	}
	return nil
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
	c, rec, err := s.Claim(ctx, tenant, key, fingerprint)
	if err != nil {
		return "", err
	}
	if rec.Done {
		return rec.Result, nil
	}
	return s.execute(ctx, c, work)
}

// execute runs work under a held claim and settles the claim. The claim is
// settled even when ctx was cancelled during the work, and released if work
// panics, so that a crash inside work leaves the key free instead of locked
// until the claim expires.
func (s *Store) execute(ctx context.Context, c Claim, work func(ctx context.Context) (string, error)) (value string, err error) {
	settleCtx := context.WithoutCancel(ctx)
	settled := false
	defer func() {
		if !settled {
			_ = s.Release(settleCtx, c) // work panicked; the panic goes on
		}
	}()
	value, err = work(ctx)
	settled = true
	if err != nil {
		if rerr := s.Release(settleCtx, c); rerr != nil {
			return value, errors.Join(err, rerr)
		}
		return value, err
	}
	if err := s.Complete(settleCtx, c, value); err != nil {
		return value, err
	}
	return value, nil
}

// redisKey returns the Redis key of (tenant, key). The tenant's length goes
// first, so the pair can be read back unambiguously whatever bytes the two
// contain: ("ab", "c") is idem:2:ab:c and ("a", "bc") is idem:1:a:bc.
func (s *Store) redisKey(tenant, key string) (string, error) {
	if err := validate("tenant", tenant, MaxTenantLen); err != nil {
		return "", err
	}
	if err := validate("key", key, MaxKeyLen); err != nil {
		return "", err
	}
	return s.opts.Prefix + "idem:" + strconv.Itoa(len(tenant)) + ":" + tenant + ":" + key, nil
}

func validate(what, s string, limit int) error {
	switch {
	case s == "":
		return fmt.Errorf("%s is empty: %w", what, ErrInvalidKey)
	case len(s) > limit:
		return fmt.Errorf("%s is %d bytes long, more than %d: %w", what, len(s), limit, ErrInvalidKey)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s %q contains a NUL byte: %w", what, s, ErrInvalidKey)
	}
	return nil
}

func describe(tenant, key string) string {
	return fmt.Sprintf("tenant %q key %q", tenant, key)
}

// A record is one Redis string. The fingerprint carries its length, so a
// fingerprint or result containing spaces cannot be misread:
//
//	pending <token> <len(fingerprint)> <fingerprint>
//	done <token> <len(fingerprint)> <fingerprint> <result>
type record struct {
	done        bool
	token       string
	fingerprint string
	result      string
}

func encodePending(token, fingerprint string) string {
	return "pending " + token + " " + strconv.Itoa(len(fingerprint)) + " " + fingerprint
}

func encodeDone(token, fingerprint, result string) string {
	return "done " + token + " " + strconv.Itoa(len(fingerprint)) + " " + fingerprint + " " + result
}

// errCorrupt is returned (wrapped) for a value this store did not write.
var errCorrupt = errors.New("unreadable record")

func decode(v string) (record, error) {
	state, rest, ok1 := strings.Cut(v, " ")
	token, rest, ok2 := strings.Cut(rest, " ")
	size, rest, ok3 := strings.Cut(rest, " ")
	n, err := strconv.Atoi(size)
	if !ok1 || !ok2 || !ok3 || err != nil || n < 0 || n > len(rest) {
		return record{}, fmt.Errorf("%w %q", errCorrupt, v)
	}
	rec := record{token: token, fingerprint: rest[:n]}
	rest = rest[n:]
	switch {
	case state == "pending" && rest == "":
	case state == "done" && strings.HasPrefix(rest, " "):
		rec.done, rec.result = true, rest[1:]
	default:
		return record{}, fmt.Errorf("%w %q", errCorrupt, v)
	}
	return rec, nil
}
