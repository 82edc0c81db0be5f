package main

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// pingRedis checks that a Redis server answers at addr before a suite is
// pointed at it, so a wrong --redis gives one clear line instead of a
// report full of failed cases.
func pingRedis(ctx context.Context, addr string) error {
	redis.SetLogger(quietLogger{}) // the error below says it once; no dial chatter
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c := redis.NewClient(&redis.Options{
		Addr:                     addr,
		DialTimeout:              2 * time.Second,
		ReadTimeout:              2 * time.Second,
		MaxRetries:               -1,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		return usagef("--redis %s: cannot reach a Redis server there: %v", addr, err)
	}
	return nil
}

// quietLogger discards go-redis's own log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
