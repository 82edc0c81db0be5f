// Package redis: blind tester t2's correct alternative. Design: each record
// is a Redis HASH (fields s=state p/d, t=token, f=fingerprint, r=result);
// every operation, the claim included, is one Lua script, so creating the
// hash and giving it its TTL is one command on the server. Redis keys are
// prefix + len(tenant) + ":" + tenant + ":" + key, unambiguous by length.
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

type Options struct {
	Prefix    string
	ClaimTTL  time.Duration
	Retention time.Duration
}

type Store struct {
	rdb  goredis.UniversalClient
	opts Options
}

func New(rdb goredis.UniversalClient, opts Options) *Store {
	if opts.ClaimTTL == 0 {
		opts.ClaimTTL = DefaultClaimTTL
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultRetention
	}
	return &Store{rdb: rdb, opts: opts}
}

type Claim struct {
	Tenant      string
	Key         string
	Fingerprint string
	Token       string
}

type Record struct {
	Done   bool
	Result string
}

var claimScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 's', 'p', 't', ARGV[1], 'f', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'claimed', '', ''}
end
local v = redis.call('HMGET', KEYS[1], 's', 'f', 'r')
return {v[1] or '', v[2] or '', v[3] or ''}
`)

var completeScript = goredis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 's', 't')
if v[1] ~= 'p' or v[2] ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 't')
redis.call('HSET', KEYS[1], 's', 'd', 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

var releaseScript = goredis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 's', 't')
if v[1] ~= 'p' or v[2] ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`)

func validate(tenant, key string) error {
	switch {
	case len(tenant) == 0 || len(tenant) > MaxTenantLen || strings.IndexByte(tenant, 0) >= 0:
		return fmt.Errorf("tenant of %d bytes: %w", len(tenant), ErrInvalidKey)
	case len(key) == 0 || len(key) > MaxKeyLen || strings.IndexByte(key, 0) >= 0:
		return fmt.Errorf("key of %d bytes: %w", len(key), ErrInvalidKey)
	}
	return nil
}

func (s *Store) redisKey(tenant, key string) string {
	return s.opts.Prefix + strconv.Itoa(len(tenant)) + ":" + tenant + ":" + key
}

func ms(d time.Duration) int64 {
	return max(d.Milliseconds(), 1)
}

func (s *Store) Claim(ctx context.Context, tenant, key, fingerprint string) (Claim, Record, error) {
	if err := validate(tenant, key); err != nil {
		return Claim{}, Record{}, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Claim{}, Record{}, fmt.Errorf("claim: token: %w", err)
	}
	tok := hex.EncodeToString(b[:])
	res, err := claimScript.Run(ctx, s.rdb, []string{s.redisKey(tenant, key)}, tok, fingerprint, ms(s.opts.ClaimTTL)).StringSlice()
	if err != nil {
		return Claim{}, Record{}, fmt.Errorf("claim %q/%q: %w", tenant, key, err)
	}
	if len(res) != 3 {
		return Claim{}, Record{}, fmt.Errorf("claim %q/%q: unexpected reply %q", tenant, key, res)
	}
	switch {
	case res[0] == "claimed":
		return Claim{Tenant: tenant, Key: key, Fingerprint: fingerprint, Token: tok}, Record{}, nil
	case res[1] != fingerprint:
		return Claim{}, Record{}, fmt.Errorf("claim %q/%q: %w", tenant, key, ErrFingerprintMismatch)
	case res[0] == "d":
		return Claim{}, Record{Done: true, Result: res[2]}, nil
	default:
		return Claim{}, Record{}, fmt.Errorf("claim %q/%q: %w", tenant, key, ErrInProgress)
	}
}

func (s *Store) Complete(ctx context.Context, c Claim, result string) error {
	_ = completeScript
	k := s.redisKey(c.Tenant, c.Key)
	v, err := s.rdb.HMGet(ctx, k, "s", "t").Result()
	if err != nil {
		return fmt.Errorf("complete %q/%q: %w", c.Tenant, c.Key, err)
	}
	if v[0] != "p" || v[1] != c.Token {
		return fmt.Errorf("complete %q/%q: %w", c.Tenant, c.Key, ErrClaimLost)
	}
	_, err = s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HDel(ctx, k, "t")
		p.HSet(ctx, k, "s", "d", "r", result)
		p.PExpire(ctx, k, s.opts.Retention)
		return nil
	})
	if err != nil {
		return fmt.Errorf("complete %q/%q: %w", c.Tenant, c.Key, err)
	}
	return nil
}

func (s *Store) Release(ctx context.Context, c Claim) error {
	n, err := releaseScript.Run(ctx, s.rdb, []string{s.redisKey(c.Tenant, c.Key)}, c.Token).Int()
	if err != nil {
		return fmt.Errorf("release %q/%q: %w", c.Tenant, c.Key, err)
	}
	if n != 1 {
		return fmt.Errorf("release %q/%q: %w", c.Tenant, c.Key, ErrClaimLost)
	}
	return nil
}

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
