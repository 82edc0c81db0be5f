// Package redis runs a piece of work at most once per idempotency key,
// with its records in Redis.
//
// Design: every state change is one Lua script. The claim script reads the
// key and, only when it is absent, writes the pending record with its PX
// expiry in the same script (so "find it held, then see it vanish" cannot
// happen). A record is one binary string: a state byte, the 32-hex-digit
// token, the fingerprint's length as 10 decimal digits, the fingerprint and
// the result. The Redis key is the prefix, the tenant's length in decimal, a
// colon, the tenant and the key: the length makes the split unambiguous.
package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

const (
	MaxTenantLen = 128
	MaxKeyLen    = 256
)

const (
	DefaultClaimTTL  = time.Minute
	DefaultRetention = 24 * time.Hour
)

var ErrInProgress = errors.New("redisclaim: work for this key is in progress")
var ErrFingerprintMismatch = errors.New("redisclaim: idempotency key reused for a different request")
var ErrInvalidKey = errors.New("redisclaim: invalid tenant or idempotency key")
var ErrClaimLost = errors.New("redisclaim: claim expired or taken over by another caller")

// Options configures a Store.
type Options struct {
	Prefix    string
	ClaimTTL  time.Duration
	Retention time.Duration
}

// Store is an idempotency store on Redis.
type Store struct {
	rdb  goredis.UniversalClient
	opts Options
}

// New returns a Store that keeps its records on rdb.
func New(rdb goredis.UniversalClient, opts Options) *Store {
	if opts.ClaimTTL == 0 {
		opts.ClaimTTL = DefaultClaimTTL
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultRetention
	}
	return &Store{rdb: rdb, opts: opts}
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

const (
	statePending = 'P'
	stateDone    = 'D'
	tokenLen     = 32
)

// claimScript: return the existing record, or create the pending one
// (ARGV[1]) with a PX of ARGV[2] and return nil.
var claimScript = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`)

// settleScript: if the record is pending and carries token ARGV[1], replace
// it with ARGV[2] for ARGV[3] ms (when ARGV[2] is not empty) or delete it.
var settleScript = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, 1) ~= 'P' or string.sub(v, 2, 33) ~= ARGV[1] then
  return 0
end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return 1
`)

func encode(state byte, token, fp, result string) string {
	var b strings.Builder
	b.WriteByte(state)
	b.WriteString(token)
	fmt.Fprintf(&b, "%010d", len(fp))
	b.WriteString(fp)
	b.WriteString(result)
	return b.String()
}

type rec struct {
	state      byte
	token      string
	fp, result string
}

func decode(v string) (rec, error) {
	if len(v) < 1+tokenLen+10 {
		return rec{}, fmt.Errorf("redisclaim: malformed record (%d bytes)", len(v))
	}
	n, err := strconv.Atoi(v[1+tokenLen : 1+tokenLen+10])
	rest := v[1+tokenLen+10:]
	if err != nil || n < 0 || n > len(rest) {
		return rec{}, fmt.Errorf("redisclaim: malformed record fingerprint length")
	}
	return rec{state: v[0], token: v[1 : 1+tokenLen], fp: rest[:n], result: rest[n:]}, nil
}

func validate(tenant, key string) error {
	if tenant == "" || len(tenant) > MaxTenantLen || strings.IndexByte(tenant, 0) >= 0 {
		return fmt.Errorf("%w: tenant of %d bytes", ErrInvalidKey, len(tenant))
	}
	if key == "" || len(key) > MaxKeyLen || strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("%w: key of %d bytes", ErrInvalidKey, len(key))
	}
	return nil
}

func (s *Store) redisKey(tenant, key string) string {
	return s.opts.Prefix + strconv.Itoa(len(tenant)) + ":" + tenant + key
}

func ms(d time.Duration) int64 {
	m := d.Milliseconds()
	if m < 1 {
		m = 1
	}
	return m
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
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w", key, err)
	}
	token, err := newToken()
	if err != nil {
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: token: %w", key, err)
	}
	rk := s.redisKey(tenant, key)
	v, err := claimScript.Run(ctx, s.rdb, []string{rk}, encode(statePending, token, fingerprint, ""), ms(s.opts.ClaimTTL)).Text()
	if errors.Is(err, goredis.Nil) {
		return Claim{Tenant: tenant, Key: key, Fingerprint: fingerprint, Token: token}, Record{}, nil
	}
	if err != nil {
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w", key, err)
	}
	r, err := decode(v)
	if err != nil {
		return Claim{}, Record{}, err
	}
	if r.fp != fingerprint {
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w", key, ErrFingerprintMismatch)
	}
	if r.state == stateDone {
		return Claim{}, Record{Done: true, Result: r.result}, nil
	}
	return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w", key, ErrInProgress)
}

func (s *Store) settle(ctx context.Context, what string, c Claim, newValue string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redisclaim: %s %q: %w", what, c.Key, err)
	}
	if c.Token == "" {
		return fmt.Errorf("redisclaim: %s %q: %w", what, c.Key, ErrClaimLost)
	}
	n, err := settleScript.Run(ctx, s.rdb, []string{s.redisKey(c.Tenant, c.Key)}, c.Token, newValue, ms(ttl)).Int()
	if err != nil {
		return fmt.Errorf("redisclaim: %s %q: %w", what, c.Key, err)
	}
	if n != 1 {
		return fmt.Errorf("redisclaim: %s %q: %w", what, c.Key, ErrClaimLost)
	}
	return nil
}

// Complete stores result as the outcome of the claim's work.
func (s *Store) Complete(ctx context.Context, c Claim, result string) error {
	return s.settle(ctx, "complete", c, encode(stateDone, c.Token, c.Fingerprint, result), s.opts.Retention)
}

// Release gives the claim up.
func (s *Store) Release(ctx context.Context, c Claim) error {
	return s.settle(ctx, "release", c, "", 0)
}

// Do runs work at most once per (tenant, key) and returns its result.
func (s *Store) Do(ctx context.Context, tenant, key, fingerprint string, work func(ctx context.Context) (string, error)) (string, error) {
	c, r, err := s.Claim(ctx, tenant, key, fingerprint)
	if err != nil {
		return "", err
	}
	if r.Done {
		return r.Result, nil
	}
	val, werr := work(ctx)
	if werr != nil {
		if rerr := s.Release(ctx, c); rerr != nil {
			return val, errors.Join(werr, rerr)
		}
		return val, werr
	}
	if cerr := s.Complete(ctx, c, val); cerr != nil {
		return val, cerr
	}
	return val, nil
}
