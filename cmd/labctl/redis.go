package main

import (
	"context"
	"errors"
	"os"

	"github.com/fourth-outcome/labkit/redisaddr"
)

// checkRedis checks the server named by --redis before a suite is pointed
// at it, so a wrong address, or a database that holds other keys, gives one
// clear line (exit 2) instead of a report full of failed cases. It returns
// the environment entry that points the suites at it. Of a rediss:// server
// labctl checks only that it accepts connections; the rest is left for the
// suite's client, which speaks TLS: labctl links no TLS, so that its first
// build on a fresh clone is short.
func checkRedis(ctx context.Context, addr string) (string, error) {
	err := redisaddr.Check(ctx, addr, redisaddr.AllowForeign(os.Environ()))
	if err != nil && !errors.Is(err, redisaddr.ErrNeedsTLS) {
		return "", usagef("--redis %s: %v", addr, err)
	}
	return redisaddr.Env + "=" + addr, nil
}
