// Package redisclient builds go-redis client options for the server the
// user named (package redisaddr parses the address and holds the check), and
// checks a server over TLS as well as plainly. The suites use it; labctl
// does not, so that labctl links no Redis client.
package redisclient

import (
	"context"
	"crypto/tls"
	"net"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/fourth-outcome/labkit/redisaddr"
)

// Options parses addr (see redisaddr.Parse) into client options with short
// timeouts: a server that stops answering is an error within a second, and
// the client never retries on its own.
func Options(addr string) (*goredis.Options, error) {
	a, err := redisaddr.Parse(addr)
	if err != nil {
		return nil, err
	}
	return &goredis.Options{
		Addr:                     a.Host,
		Network:                  a.Network,
		Username:                 a.Username,
		Password:                 a.Password,
		DB:                       a.DB,
		TLSConfig:                tlsConfig(a),
		DialTimeout:              redisaddr.DialTimeout,
		DialerRetries:            1,
		ReadTimeout:              redisaddr.ReplyTimeout,
		WriteTimeout:             redisaddr.ReplyTimeout,
		MaxRetries:               -1,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}, nil
}

// tlsConfig is the TLS configuration of a rediss:// address, nil for any
// other, as go-redis's own ParseURL makes it.
func tlsConfig(a redisaddr.Addr) *tls.Config {
	if !a.TLS {
		return nil
	}
	host, _, err := net.SplitHostPort(a.Host)
	if err != nil {
		host = a.Host
	}
	return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
}

// Check is redisaddr.Check for any address, a rediss:// one included: it
// speaks TLS where the address asks for it.
func Check(ctx context.Context, addr string, allowForeign bool) error {
	return redisaddr.CheckWith(ctx, addr, allowForeign, func(ctx context.Context, a redisaddr.Addr) (net.Conn, error) {
		d := net.Dialer{Timeout: redisaddr.DialTimeout}
		if cfg := tlsConfig(a); cfg != nil {
			td := tls.Dialer{NetDialer: &d, Config: cfg}
			return td.DialContext(ctx, a.Network, a.Host)
		}
		return d.DialContext(ctx, a.Network, a.Host)
	})
}
