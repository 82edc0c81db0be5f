// Package redis runs a piece of work at most once per idempotency key,
// with its records in Redis.
//
// This variant keeps each record as a Redis hash (state, token, fp, result),
// claims with a Lua script (create-if-absent and PEXPIRE in one command on
// the server), and joins tenant and key with a NUL byte, which neither may
// contain.
package redis

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
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
	rdb       goredis.UniversalClient
	prefix    string
	claimTTL  time.Duration
	retention time.Duration
}

func New(rdb goredis.UniversalClient, opts Options) *Store {
	s := &Store{rdb: rdb, prefix: opts.Prefix, claimTTL: opts.ClaimTTL, retention: opts.Retention}
	if s.claimTTL <= 0 {
		s.claimTTL = DefaultClaimTTL
	}
	if s.retention <= 0 {
		s.retention = DefaultRetention
	}
	return s
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

func checkPart(what, v string, max int) error {
	switch {
	case v == "":
		return fmt.Errorf("%s is empty: %w", what, ErrInvalidKey)
	case len(v) > max:
		return fmt.Errorf("%s is %d bytes, more than %d: %w", what, len(v), max, ErrInvalidKey)
	case strings.ContainsRune(v, 0):
		return fmt.Errorf("%s contains a NUL byte: %w", what, ErrInvalidKey)
	}
	return nil
}

func (s *Store) rkey(tenant, key string) (string, error) {
	if err := checkPart("tenant", tenant, MaxTenantLen); err != nil {
		return "", err
	}
	if err := checkPart("key", key, MaxKeyLen); err != nil {
		return "", err
	}
	return s.prefix + tenant + "\x00" + key, nil
}

// claimScript: if the key is absent, create the pending hash with a TTL and
// return {1}; otherwise return {0, state, fp, result}.
var claimScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'state', 'pending', 'token', ARGV[1], 'fp', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {1}
end
local f = redis.call('HMGET', KEYS[1], 'state', 'fp', 'result')
return {0, f[1] or '', f[2] or '', f[3] or ''}
`)

var completeScript = goredis.NewScript(`
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then return 0 end
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'done', 'result', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

var releaseScript = goredis.NewScript(`
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then return 0 end
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`)

func (s *Store) Claim(ctx context.Context, tenant, key, fingerprint string) (Claim, Record, error) {
	rk, err := s.rkey(tenant, key)
	if err != nil {
		return Claim{}, Record{}, err
	}
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return Claim{}, Record{}, fmt.Errorf("claim: token: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(b)
	res, err := claimScript.Run(ctx, s.rdb, []string{rk}, tok, fingerprint, s.claimTTL.Milliseconds()).Slice()
	if err != nil {
		return Claim{}, Record{}, fmt.Errorf("claim tenant %q key %q: %w", tenant, key, err)
	}
	if n, _ := res[0].(int64); n == 1 {
		return Claim{Tenant: tenant, Key: key, Fingerprint: fingerprint, Token: tok}, Record{}, nil
	}
	if len(res) != 4 {
		return Claim{}, Record{}, fmt.Errorf("claim tenant %q key %q: unexpected reply %v", tenant, key, res)
	}
	state, _ := res[1].(string)
	fp, _ := res[2].(string)
	result, _ := res[3].(string)
	if fp != fingerprint {
		return Claim{}, Record{}, fmt.Errorf("claim tenant %q key %q: %w", tenant, key, ErrFingerprintMismatch)
	}
	if state == "done" {
		return Claim{}, Record{Done: true, Result: result}, nil
	}
	return Claim{}, Record{}, fmt.Errorf("claim tenant %q key %q: %w", tenant, key, ErrInProgress)
}

func (s *Store) Complete(ctx context.Context, c Claim, result string) error {
	rk, err := s.rkey(c.Tenant, c.Key)
	if err != nil {
		return err
	}
	n, err := completeScript.Run(ctx, s.rdb, []string{rk}, c.Token, result, s.retention.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("complete tenant %q key %q: %w", c.Tenant, c.Key, err)
	}
	if n == 0 {
		return fmt.Errorf("complete tenant %q key %q: %w", c.Tenant, c.Key, ErrClaimLost)
	}
	return nil
}

func (s *Store) Release(ctx context.Context, c Claim) error {
	rk, err := s.rkey(c.Tenant, c.Key)
	if err != nil {
		return err
	}
	n, err := releaseScript.Run(ctx, s.rdb, []string{rk}, c.Token).Int()
	if err != nil {
		return fmt.Errorf("release tenant %q key %q: %w", c.Tenant, c.Key, err)
	}
	if n == 0 {
		return fmt.Errorf("release tenant %q key %q: %w", c.Tenant, c.Key, ErrClaimLost)
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
		return "", errors.Join(werr, s.Release(ctx, c))
	}
	return v, s.Complete(ctx, c, v)
}
