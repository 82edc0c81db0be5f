// Package redis runs a piece of work at most once per idempotency key,
// with its records in Redis.
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

var _ = strconv.Itoa

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
	//@FIELDS
}

// New returns a Store that keeps its records on rdb.
func New(rdb goredis.UniversalClient, opts Options) *Store {
	if opts.ClaimTTL == 0 {
		opts.ClaimTTL = DefaultClaimTTL
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultRetention
	}
	return &Store{rdb: rdb, opts: opts /*@INIT*/}
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

// A record is "P" or "D", the 32-hex token, the fingerprint's length in 10
// digits, the fingerprint, the result.
func encode(state, token, fp, result string) string {
	return state + token + fmt.Sprintf("%010d", len(fp)) + fp + result
}

type rec struct{ state, token, fp, result string }

func decode(v string) (rec, error) {
	if len(v) < 43 {
		return rec{}, errors.New("redisclaim: malformed record")
	}
	n, err := strconv.Atoi(v[33:43])
	rest := v[43:]
	if err != nil || n < 0 || n > len(rest) {
		return rec{}, errors.New("redisclaim: malformed record")
	}
	return rec{state: v[:1], token: v[1:33], fp: rest[:n], result: rest[n:]}, nil
}

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

func validate(tenant, key string) error {
	if tenant == "" || len(tenant) > MaxTenantLen || strings.IndexByte(tenant, 0) >= 0 {
		return fmt.Errorf("%w: tenant", ErrInvalidKey)
	}
	if key == "" || len(key) > MaxKeyLen || strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("%w: key", ErrInvalidKey)
	}
	return nil
}

func (s *Store) redisKey(tenant, key string) string {
	return s.opts.Prefix + hex.EncodeToString([]byte(tenant)) + ":" + hex.EncodeToString([]byte(key))
}

func (s *Store) newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Claim tries to claim key for tenant.
func (s *Store) Claim(ctx context.Context, tenant, key, fingerprint string) (Claim, Record, error) {
	if err := validate(tenant, key); err != nil {
		return Claim{}, Record{}, err
	}
	rk := s.redisKey(tenant, key)
	for attempt := 0; attempt < 3; attempt++ {
		token := s.newToken()
		//@SETNX
		ok, err := s.rdb.SetNX(ctx, rk, encode("P", token, fingerprint, ""), s.opts.ClaimTTL).Result()
		if err != nil {
			return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w (redis busy: %v)", key, ErrInProgress, err)
		}
		if ok {
			return Claim{Tenant: tenant, Key: key, Fingerprint: fingerprint, Token: token}, Record{}, nil
		}
		v, err := s.rdb.Get(ctx, rk).Result()
		if errors.Is(err, goredis.Nil) {
			continue // vanished between the two commands: try to claim again
		}
		if err != nil {
			return Claim{}, Record{}, fmt.Errorf("redisclaim: read %q: %w", key, err)
		}
		r, err := decode(v)
		if err != nil {
			return Claim{}, Record{}, err
		}
		if r.fp != fingerprint {
			return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w", key, ErrFingerprintMismatch)
		}
		if r.state == "D" {
			//@REPLAY
			return Claim{}, Record{Done: true, Result: r.result}, nil
		}
		return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w", key, ErrInProgress)
	}
	return Claim{}, Record{}, fmt.Errorf("redisclaim: claim %q: %w", key, ErrInProgress)
}

// Complete stores result as the outcome of the claim's work.
func (s *Store) Complete(ctx context.Context, c Claim, result string) error {
	//@COMPLETE
	n, err := settleScript.Run(ctx, s.rdb, []string{s.redisKey(c.Tenant, c.Key)}, c.Token,
		encode("D", c.Token, c.Fingerprint, result), s.opts.Retention.Milliseconds()).Int()
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
	n, err := settleScript.Run(ctx, s.rdb, []string{s.redisKey(c.Tenant, c.Key)}, c.Token, "", 0).Int()
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
	//@DOSTART
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
	//@DONE
	return val, nil
}
