// Package redis runs a piece of work at most once per idempotency key,
// with its records in Redis, so that a claim outlives the process that took
// it and is shared by every process that talks to the same server.
//
// Design: one Redis string per (tenant, key), under
// Prefix + len(tenant) + ":" + tenant + ":" + key. A pending record is
// "P" + token (32 hex) + fingerprint; a completed one is
// "D" + len(fingerprint) + ":" + fingerprint + result. Claim is SET NX PX;
// Complete and Release compare the whole pending value and write in one Lua
// script.
package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Limits on a tenant and an idempotency key, in bytes.
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
// holds the claim on the same key and has not finished.
var ErrInProgress = errors.New("redisclaim: work for this key is in progress")

// ErrFingerprintMismatch is returned (wrapped) by Claim and Do when the key
// is already used by a request with a different fingerprint.
var ErrFingerprintMismatch = errors.New("redisclaim: idempotency key reused for a different request")

// ErrInvalidKey is returned (wrapped) when a tenant or key is empty, too
// long or contains a NUL byte.
var ErrInvalidKey = errors.New("redisclaim: invalid tenant or idempotency key")

// ErrClaimLost is returned (wrapped) by Complete and Release when the claim
// is no longer the caller's.
var ErrClaimLost = errors.New("redisclaim: claim expired or taken over by another caller")

// Options configures a Store.
type Options struct {
	Prefix    string
	ClaimTTL  time.Duration
	Retention time.Duration
}

// Store is an idempotency store on Redis. A Store is safe for concurrent use.
type Store struct {
	rdb  goredis.UniversalClient
	opts Options

	mu  sync.Mutex
	rng *mrand.Rand
}

func (s *Store) newToken() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%016x%016x", s.rng.Uint64(), s.rng.Uint64()), nil
}

const tokenLen = 32 // hex characters

var completeScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
`)

var releaseScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`)

// New returns a Store that keeps its records on rdb.
func New(rdb goredis.UniversalClient, opts Options) *Store {
	if opts.ClaimTTL == 0 {
		opts.ClaimTTL = DefaultClaimTTL
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultRetention
	}
	return &Store{rdb: rdb, opts: opts, rng: mrand.New(mrand.NewSource(time.Now().Unix()))}
}

// Claim is what the one caller that won a key holds.
type Claim struct {
	Tenant      string
	Key         string
	Fingerprint string
	Token       string
}

// Record is what Claim found when the key's work has already completed.
type Record struct {
	Done   bool
	Result string
}

func validate(tenant, key string) error {
	if len(tenant) == 0 || len(tenant) > MaxTenantLen || strings.IndexByte(tenant, 0) >= 0 {
		return fmt.Errorf("%w: tenant of %d bytes", ErrInvalidKey, len(tenant))
	}
	if len(key) == 0 || len(key) > MaxKeyLen || strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("%w: key of %d bytes", ErrInvalidKey, len(key))
	}
	return nil
}

// redisKey is unambiguous: the tenant's length says where it ends.
func (s *Store) redisKey(tenant, key string) string {
	return s.opts.Prefix + strconv.Itoa(len(tenant)) + ":" + tenant + ":" + key
}

func pendingValue(token, fingerprint string) string {
	return "P" + token + fingerprint
}

func doneValue(fingerprint, result string) string {
	return "D" + strconv.Itoa(len(fingerprint)) + ":" + fingerprint + result
}

func ms(d time.Duration) int64 {
	if m := d.Milliseconds(); m > 0 {
		return m
	}
	return 1
}

func newToken() (string, error) {
	var b [tokenLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Claim tries to claim key for tenant.
func (s *Store) Claim(ctx context.Context, tenant, key, fingerprint string) (Claim, Record, error) {
	if err := validate(tenant, key); err != nil {
		return Claim{}, Record{}, err
	}
	if err := ctx.Err(); err != nil {
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim: %w", err)
	}
	rk := s.redisKey(tenant, key)
	token, err := s.newToken()
	if err != nil {
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim: making a token: %w", err)
	}
	res, err := s.rdb.SetArgs(ctx, rk, pendingValue(token, fingerprint), goredis.SetArgs{Mode: "NX", TTL: time.Duration(ms(s.opts.ClaimTTL)) * time.Millisecond}).Result()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim: SET NX: %w", err)
	}
	if err == nil && res == "OK" {
		return Claim{Tenant: tenant, Key: key, Fingerprint: fingerprint, Token: token}, Record{}, nil
	}
	v, err := s.rdb.Get(ctx, rk).Result()
	if errors.Is(err, goredis.Nil) {
		// Held a moment ago, gone now: we wrote nothing, so we hold nothing.
		return Claim{}, Record{}, fmt.Errorf("%w: the holder's record vanished, ask again", ErrInProgress)
	}
	if err != nil {
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim: reading the held record: %w", err)
	}
	switch {
	case len(v) >= 1+tokenLen && v[0] == 'P':
		if v[1+tokenLen:] != fingerprint {
			return Claim{}, Record{}, ErrFingerprintMismatch
		}
		return Claim{}, Record{}, ErrInProgress
	case len(v) >= 1 && v[0] == 'D':
		i := strings.IndexByte(v, ':')
		n, perr := strconv.Atoi(v[1:max(i, 1)])
		if i < 0 || perr != nil || n < 0 || i+1+n > len(v) {
			return Claim{}, Record{}, fmt.Errorf("redisclaim: claim: corrupt completed record under %q", rk)
		}
		if v[i+1:i+1+n] != fingerprint {
			return Claim{}, Record{}, ErrFingerprintMismatch
		}
		return Claim{}, Record{Done: true, Result: v[i+1+n:]}, nil
	}
	return Claim{}, Record{}, fmt.Errorf("redisclaim: claim: corrupt record under %q", rk)
}

// Complete stores result as the outcome of the claim's work.
func (s *Store) Complete(ctx context.Context, c Claim, result string) error {
	if len(c.Token) != tokenLen {
		return fmt.Errorf("%w: not a claim this store handed out", ErrClaimLost)
	}
	n, err := completeScript.Run(ctx, s.rdb, []string{s.redisKey(c.Tenant, c.Key)},
		pendingValue(c.Token, c.Fingerprint), doneValue(c.Fingerprint, result), ms(s.opts.Retention)).Int()
	if err != nil {
		return fmt.Errorf("redisclaim: complete: %w", err)
	}
	if n != 1 {
		return ErrClaimLost
	}
	return nil
}

// Release gives the claim up.
func (s *Store) Release(ctx context.Context, c Claim) error {
	if len(c.Token) != tokenLen {
		return fmt.Errorf("%w: not a claim this store handed out", ErrClaimLost)
	}
	n, err := releaseScript.Run(ctx, s.rdb, []string{s.redisKey(c.Tenant, c.Key)},
		pendingValue(c.Token, c.Fingerprint)).Int()
	if err != nil {
		return fmt.Errorf("redisclaim: release: %w", err)
	}
	if n != 1 {
		return ErrClaimLost
	}
	return nil
}

// Do runs work at most once per (tenant, key) and returns its result.
func (s *Store) Do(ctx context.Context, tenant, key, fingerprint string, work func(ctx context.Context) (string, error)) (string, error) {
	c, rec, err := s.Claim(ctx, tenant, key, fingerprint)
	if err != nil {
		return "", err
	}
	if rec.Done {
		return rec.Result, nil
	}
	v, werr := work(ctx)
	if werr != nil {
		if rerr := s.Release(ctx, c); rerr != nil {
			return "", errors.Join(werr, rerr)
		}
		return "", werr
	}
	if cerr := s.Complete(ctx, c, v); cerr != nil {
		return v, cerr
	}
	return v, nil
}
