// Package redis runs a piece of work at most once per idempotency key,
// with its records in Redis (t6's implementation: SET NX PX for the claim,
// Lua scripts for the token-checked settlements).
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
	"unicode/utf8"

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

// Store is an idempotency store on Redis. It keeps no record in memory.
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

// A record is one Redis string:
//
//	pending:   "P" + token (32 hex) + len(fp) + ":" + fp
//	completed: "D" + token (32 hex) + len(fp) + ":" + fp + result
const tokenLen = 32

func pendingValue(token, fp string) string {
	return "P" + token + strconv.Itoa(len(fp)) + ":" + fp
}

func doneValue(token, fp, result string) string {
	return "D" + token + strconv.Itoa(len(fp)) + ":" + fp + result
}

type stored struct {
	done   bool
	token  string
	fp     string
	result string
}

func parseValue(v string) (stored, error) {
	bad := fmt.Errorf("redisclaim: malformed record %q", v)
	if len(v) < 1+tokenLen || (v[0] != 'P' && v[0] != 'D') {
		return stored{}, bad
	}
	st := stored{done: v[0] == 'D', token: v[1 : 1+tokenLen]}
	rest := v[1+tokenLen:]
	n, after, ok := strings.Cut(rest, ":")
	if !ok {
		return stored{}, bad
	}
	l, err := strconv.Atoi(n)
	if err != nil || l < 0 || l > len(after) {
		return stored{}, bad
	}
	st.fp, st.result = after[:l], after[l:]
	return st, nil
}

func validPart(s string, max int) bool {
	return len(s) >= 1 && utf8.RuneCountInString(s) <= max && strings.IndexByte(s, 0) < 0
}

func validate(tenant, key string) error {
	if !validPart(tenant, MaxTenantLen) {
		return fmt.Errorf("%w: tenant %q", ErrInvalidKey, tenant)
	}
	if !validPart(key, MaxKeyLen) {
		return fmt.Errorf("%w: key %q", ErrInvalidKey, key)
	}
	return nil
}

// redisKey is prefix + len(tenant) + ":" + tenant + ":" + key: the length
// tells where the tenant ends, whatever bytes the parts contain.
func (s *Store) redisKey(tenant, key string) string {
	return s.opts.Prefix + strconv.Itoa(len(tenant)) + ":" + tenant + ":" + key
}

func newToken() (string, error) {
	b := make([]byte, tokenLen/2)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Claim tries to claim key for tenant.
func (s *Store) Claim(ctx context.Context, tenant, key, fingerprint string) (Claim, Record, error) {
	if err := validate(tenant, key); err != nil {
		return Claim{}, Record{}, err
	}
	token, err := newToken()
	if err != nil {
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim: token: %w", err)
	}
	rk := s.redisKey(tenant, key)
	c := Claim{Tenant: tenant, Key: key, Fingerprint: fingerprint, Token: token}
	for attempt := 0; attempt < 3; attempt++ {
		ok, err := s.rdb.SetNX(ctx, rk, pendingValue(token, fingerprint), s.opts.ClaimTTL).Result()
		if err != nil {
			return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: set nx: %w", key, err)
		}
		if ok {
			return c, Record{}, nil
		}
		v, err := s.rdb.Get(ctx, rk).Result()
		if errors.Is(err, goredis.Nil) {
			continue // the holder's record vanished: try to claim again
		}
		if err != nil {
			return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: read record: %w", key, err)
		}
		st, err := parseValue(v)
		if err != nil {
			return Claim{}, Record{}, err
		}
		if st.fp != fingerprint {
			return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w", key, ErrFingerprintMismatch)
		}
		if st.done {
			return Claim{}, Record{Done: true, Result: st.result}, nil
		}
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w", key, ErrInProgress)
	}
	return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w", key, ErrInProgress)
}

// completeScript: KEYS[1] the record, ARGV[1] the pending value the claim
// wrote, ARGV[2] the completed value, ARGV[3] the retention in ms.
var completeScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
`)

// releaseScript: KEYS[1] the record, ARGV[1] the pending value the claim wrote.
var releaseScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`)

// Complete stores result as the outcome of the claim's work.
func (s *Store) Complete(ctx context.Context, c Claim, result string) error {
	rk := s.redisKey(c.Tenant, c.Key)
	n, err := completeScript.Run(ctx, s.rdb, []string{rk},
		pendingValue(c.Token, c.Fingerprint),
		doneValue(c.Token, c.Fingerprint, result),
		s.opts.Retention.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("redisclaim: complete %q: %w", c.Key, err)
	}
	if n != 1 {
		return fmt.Errorf("redisclaim: complete %q: %w", c.Key, ErrClaimLost)
	}
	return nil
}

// Release gives the claim up.
func (s *Store) Release(ctx context.Context, c Claim) error {
	rk := s.redisKey(c.Tenant, c.Key)
	n, err := releaseScript.Run(ctx, s.rdb, []string{rk}, pendingValue(c.Token, c.Fingerprint)).Int()
	if err != nil {
		return fmt.Errorf("redisclaim: release %q: %w", c.Key, err)
	}
	if n != 1 {
		return fmt.Errorf("redisclaim: release %q: %w", c.Key, ErrClaimLost)
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
