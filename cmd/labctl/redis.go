package main

import (
	"context"
	"os"

	"github.com/fourth-outcome/labkit/redisaddr"
)

// checkRedis checks the server named by --redis before a suite is pointed
// at it, so a wrong address, or a database that holds other keys, gives one
// clear line (exit 2) instead of a report full of failed cases. It returns
// the environment entry that points the suites at it.
func checkRedis(ctx context.Context, addr string) (string, error) {
	if err := redisaddr.Check(ctx, addr, redisaddr.AllowForeign(os.Environ())); err != nil {
		return "", usagef("--redis %s: %v", addr, err)
	}
	return redisaddr.Env + "=" + addr, nil
}
