// Package fakeredis starts an in-process Redis (miniredis) on the virtual
// clock of a fakeclock bubble, with go-redis clients on in-memory pipes. It
// is apart from package fakeclock so that a suite on virtual time that
// needs no Redis (every lab but 02 and 10) links no Redis client, no Redis
// server and no network stack: a fresh clone's first check builds less.
package fakeredis

import (
	"context"
	"net"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Start starts an in-process miniredis whose key TTLs follow the bubble's
// virtual clock, and returns it with a connected go-redis client. Call it from
// inside a bubble (fakeclock.Run): connections are in-memory pipes made by m.Dial, so
// goroutines blocked on them count as idle and Advance works; no port is
// opened. The server and client are closed when the test ends.
//
// Further clients for the same server (a second process, a restarted worker)
// come from NewClient.
func Start(tb testing.TB) (*miniredis.Miniredis, *redis.Client) {
	tb.Helper()
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	tb.Cleanup(m.Close)
	return m, NewClient(tb, m)
}

// NewClient returns a new go-redis client connected to m through in-memory
// pipes, closed when the test ends. Separate clients have separate connection
// pools, as separate processes would.
func NewClient(tb testing.TB, m *miniredis.Miniredis) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{
		Addr: "miniredis.pipe",
		Dialer: func(context.Context, string, string) (net.Conn, error) {
			return m.Dial()
		},
		// Idle-connection reaping and pings would start background timers that
		// keep the bubble busy; the pipe never goes stale, so turn them off.
		ConnMaxIdleTime: -1,
		ConnMaxLifetime: -1,
		DisableIdentity: true,
		Protocol:        2,
		// Maintenance notifications resolve the address over DNS, which is
		// neither possible for a pipe nor allowed inside a bubble.
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}
