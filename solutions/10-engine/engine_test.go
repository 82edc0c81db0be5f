package engine

import (
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/suites/enginesuite"
)

// TestEngine runs the lab's conformance suite, every case against the
// memory backend and the Redis backend (an embedded Redis by default, the
// server named by REDIS_ADDR when it is set). The grader replaces this file
// with its own pristine copy, so editing it changes nothing in labctl check.
func TestEngine(t *testing.T) {
	enginesuite.Run(t, enginesuite.Impl{
		NewMemory: func(o Options) (Backend, error) { return NewMemory(o) },
		NewRedis: func(rdb goredis.UniversalClient, namespace string, o Options) (Backend, error) {
			return NewRedis(rdb, namespace, o)
		},
		NewEngine: func(b Backend, api provider.API) enginesuite.Worker { return NewEngine(b, api) },
	})
}
