// Package redis runs a piece of work at most once per idempotency key,
// with its records in Redis.
package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

// record is the JSON value stored under each key.
type record struct {
	State       string `json:"state"` // "pending" or "done"
	Token       string `json:"token"`
	Fingerprint []byte `json:"fp"`               // []byte: JSON keeps its bytes exactly (base64)
	Result      []byte `json:"result,omitempty"` // a string field would turn invalid UTF-8 into U+FFFD
}

func validate(tenant, key string) error {
	if tenant == "" || len(tenant) > MaxTenantLen || strings.IndexByte(tenant, 0) >= 0 {
		return fmt.Errorf("tenant %q: %w", tenant, ErrInvalidKey)
	}
	if key == "" || len(key) > MaxKeyLen || strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("key %q: %w", key, ErrInvalidKey)
	}
	return nil
}

// redisKey length-prefixes the tenant so that no two pairs collide.
func (s *Store) redisKey(tenant, key string) string {
	return s.opts.Prefix + strconv.Itoa(len(tenant)) + ":" + tenant + ":" + key
}

func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func (s *Store) Claim(ctx context.Context, tenant, key, fingerprint string) (Claim, Record, error) {
	if err := validate(tenant, key); err != nil {
		return Claim{}, Record{}, err
	}
	tok, err := newToken()
	if err != nil {
		return Claim{}, Record{}, fmt.Errorf("claim: token: %w", err)
	}
	rk := s.redisKey(tenant, key)
	val, _ := json.Marshal(record{State: "pending", Token: tok, Fingerprint: []byte(fingerprint)})
	ok, err := s.rdb.SetNX(ctx, rk, val, s.opts.ClaimTTL).Result()
	if err != nil {
		return Claim{}, Record{}, fmt.Errorf("claim %s: set nx: %w", rk, err)
	}
	if ok {
		return Claim{Tenant: tenant, Key: key, Fingerprint: fingerprint, Token: tok}, Record{}, nil
	}
	raw, err := s.rdb.Get(ctx, rk).Result()
	if errors.Is(err, goredis.Nil) {
		// expired between our SET and GET: the other owner is gone; report in progress, caller retries.
		return Claim{}, Record{}, fmt.Errorf("claim %s: record vanished: %w", rk, ErrInProgress)
	}
	if err != nil {
		return Claim{}, Record{}, fmt.Errorf("claim %s: get: %w", rk, err)
	}
	var r record
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return Claim{}, Record{}, fmt.Errorf("claim %s: decode: %w", rk, err)
	}
	if string(r.Fingerprint) != fingerprint {
		return Claim{}, Record{}, fmt.Errorf("claim %s: %w", rk, ErrFingerprintMismatch)
	}
	if r.State == "done" {
		return Claim{}, Record{Done: true, Result: string(r.Result)}, nil
	}
	return Claim{}, Record{}, fmt.Errorf("claim %s: %w", rk, ErrInProgress)
}

var completeScript = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local r = cjson.decode(v)
if r.state ~= 'pending' or r.token ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)

var releaseScript = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local r = cjson.decode(v)
if r.state ~= 'pending' or r.token ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`)

func (s *Store) Complete(ctx context.Context, c Claim, result string) error {
	if err := validate(c.Tenant, c.Key); err != nil {
		return err
	}
	rk := s.redisKey(c.Tenant, c.Key)
	val, _ := json.Marshal(record{State: "done", Token: c.Token, Fingerprint: []byte(c.Fingerprint), Result: []byte(result)})
	n, err := completeScript.Run(ctx, s.rdb, []string{rk}, c.Token, string(val), s.opts.Retention.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("complete %s: %w", rk, err)
	}
	if n != 1 {
		return fmt.Errorf("complete %s: %w", rk, ErrClaimLost)
	}
	return nil
}

func (s *Store) Release(ctx context.Context, c Claim) error {
	if err := validate(c.Tenant, c.Key); err != nil {
		return err
	}
	rk := s.redisKey(c.Tenant, c.Key)
	n, err := releaseScript.Run(ctx, s.rdb, []string{rk}, c.Token).Int()
	if err != nil {
		return fmt.Errorf("release %s: %w", rk, err)
	}
	if n != 1 {
		return fmt.Errorf("release %s: %w", rk, ErrClaimLost)
	}
	return nil
}

func (s *Store) Do(ctx context.Context, tenant, key, fingerprint string, work func(ctx context.Context) (string, error)) (string, error) {
	c, rec, err := s.Claim(ctx, tenant, key, fingerprint)
	if err != nil {
		return "", err
	}
	if rec.Done {
		return string(rec.Result), nil
	}
	v, werr := work(ctx)
	if werr != nil {
		if rerr := s.Release(ctx, c); rerr != nil {
			return "", errors.Join(werr, rerr)
		}
		return "", werr
	}
	if err := s.Complete(ctx, c, v); err != nil {
		return v, err
	}
	return v, nil
}
