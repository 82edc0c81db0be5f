// Package redisaddr turns the user's choice of a real Redis server (the
// REDIS_ADDR environment variable, or labctl's --redis flag) into client
// options, and checks that the server is one the suites may use: it answers,
// and its database holds no keys but the kit's own. labctl, the Redis lab's
// suite and the claim benchmark share it.
package redisaddr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Environment variables that point the kit at a real Redis server.
const (
	// Env names the server: "127.0.0.1:6379" or "redis://host:port/db".
	Env = "REDIS_ADDR"
	// AllowForeignEnv, set to 1, allows a database that holds keys
	// outside "labkit:". The suites only ever delete their own keys.
	AllowForeignEnv = "LABKIT_REDIS_ALLOW_FOREIGN_KEYS"
)

// KeyPrefix starts every key the kit writes.
const KeyPrefix = "labkit:"

// Sentinel errors of Check, for errors.Is.
var (
	ErrBadAddr     = errors.New("not a Redis address")
	ErrUnreachable = errors.New("cannot reach a Redis server")
	ErrForeignKeys = errors.New("the database holds keys that are not the kit's")
)

// Options parses addr, either host:port or a redis:// (or rediss://) URL
// with optional credentials and database number, into client options with
// short timeouts: a server that stops answering is an error within a second,
// and the client never retries on its own.
func Options(addr string) (*goredis.Options, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return nil, fmt.Errorf("%w: empty address (want host:port or redis://host:port/db)", ErrBadAddr)
	}
	base := &goredis.Options{Addr: addr}
	if strings.Contains(addr, "://") {
		var err error
		if base, err = goredis.ParseURL(addr); err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrBadAddr, addr, err)
		}
	} else if !strings.Contains(addr, ":") {
		return nil, fmt.Errorf("%w: %q has no port (want host:port or redis://host:port/db)", ErrBadAddr, addr)
	}
	return &goredis.Options{
		Addr:                     base.Addr,
		Network:                  base.Network,
		Username:                 base.Username,
		Password:                 base.Password,
		DB:                       base.DB,
		TLSConfig:                base.TLSConfig,
		DialTimeout:              time.Second,
		DialerRetries:            1,
		ReadTimeout:              time.Second,
		WriteTimeout:             time.Second,
		MaxRetries:               -1,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}, nil
}

// Describe names the server addr points at, for a report: "host:port db
// N", with "(TLS)" for a rediss:// URL, and never its credentials.
func Describe(addr string) string {
	o, err := Options(addr)
	if err != nil {
		return "an unparsable address"
	}
	s := fmt.Sprintf("%s db %d", o.Addr, o.DB)
	if o.TLSConfig != nil {
		s += " (TLS)"
	}
	return s
}

// Check connects to addr and returns nil when the server answers and (unless
// allowForeign) its database holds no key outside KeyPrefix. Its errors are
// one line, wrap ErrBadAddr, ErrUnreachable or ErrForeignKeys, and say what
// to do.
func Check(ctx context.Context, addr string, allowForeign bool) error {
	opts, err := Options(addr)
	if err != nil {
		return err
	}
	goredis.SetLogger(quietLogger{}) // the error below says it once; no dial chatter
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c := goredis.NewClient(opts)
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("%w at %s: %s", ErrUnreachable, addr, oneLine(err))
	}
	if allowForeign {
		return nil
	}
	foreign, err := firstForeignKey(ctx, c)
	if err != nil {
		return fmt.Errorf("%w at %s: cannot list keys: %s", ErrUnreachable, addr, oneLine(err))
	}
	if foreign != "" {
		return fmt.Errorf("%w: database %d at %s holds keys outside %q (for example %q); use an empty database (redis://%s/15) or set %s=1 (the kit only ever deletes its own keys)",
			ErrForeignKeys, opts.DB, addr, KeyPrefix, show(foreign), opts.Addr, AllowForeignEnv)
	}
	return nil
}

// AllowForeign reports whether AllowForeignEnv is set to 1 in env, a list of
// KEY=VALUE pairs as os.Environ returns.
func AllowForeign(env []string) bool {
	for _, kv := range env {
		if kv == AllowForeignEnv+"=1" {
			return true
		}
	}
	return false
}

func firstForeignKey(ctx context.Context, rdb *goredis.Client) (string, error) {
	iter := rdb.Scan(ctx, 0, "", 1000).Iterator()
	for iter.Next(ctx) {
		if !strings.HasPrefix(iter.Val(), KeyPrefix) {
			return iter.Val(), nil
		}
	}
	return "", iter.Err()
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// show shortens a key for an error message.
func show(key string) string {
	if len(key) > 40 {
		return key[:40] + "..."
	}
	return key
}

// quietLogger discards go-redis's own log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
