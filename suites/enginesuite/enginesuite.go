// Package enginesuite is the conformance suite of lab 10 (the durable agent
// task engine, the capstone). Run checks a lab's two backends and its
// engine; the lab's test file, the reference solution's test file and the
// grader all call it the same way:
//
//	func TestEngine(t *testing.T) {
//		enginesuite.Run(t, enginesuite.Impl{
//			NewMemory: func(o Options) (Backend, error) { return NewMemory(o) },
//			NewRedis: func(rdb goredis.UniversalClient, namespace string, o Options) (Backend, error) {
//				return NewRedis(rdb, namespace, o)
//			},
//			NewEngine: func(b Backend, api provider.API) enginesuite.Worker { return NewEngine(b, api) },
//		})
//	}
//
// Every case runs twice, as two cases with points of their own: first
// against the memory backend (<case>_on_memory), then against the Redis
// backend (<case>_on_redis). One specification, two implementations, and
// a correct memory backend earns its half while the Redis one is still
// unstarted. A case about what only Redis has (a state that outlives its
// process, namespaces, Redis errors) runs on Redis alone, under its own
// name.
//
// Time is the suite's own: every backend is built with Options.Now set to
// a clock the case moves by hand, so leases expire and backoffs end on
// exact instants, days pass in no time, and the verdict is the same on
// miniredis (the default, in each case's bubble) and on a real server
// (REDIS_ADDR, or labctl verify --redis), where every key lives under a
// unique "labkit:test:" namespace and is deleted afterwards. The suite
// refuses a database that holds keys outside "labkit:" unless
// LABKIT_REDIS_ALLOW_FOREIGN_KEYS=1.
//
// Around the implementation the suite puts a fake signing provider (lab
// 03's) behind a wrapper that can fail a call, commit it and lose the
// reply, or crash the worker; wrappers around each worker's backend that
// crash it before or after any call; and, for Redis, a hook on every
// client that can fail, hold back or refuse any command.
package enginesuite

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/redisaddr"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// Backend is what the lab's two backends implement (task.JobBackend).
type Backend = task.JobBackend

// Options configure a backend (task.BackendOptions).
type Options = task.BackendOptions

// Worker is the lab's engine as the suite sees it.
type Worker interface {
	// Work leases one job for the named worker and runs it: nil when the
	// job's outcome was recorded, ErrNoJob when no job is visible.
	Work(ctx context.Context, worker string) error
}

// Impl is the lab's implementation: its two backend constructors and its
// engine constructor.
type Impl struct {
	// NewMemory returns a new, empty in-memory backend.
	NewMemory func(o Options) (Backend, error)
	// NewRedis returns a backend on rdb whose keys all start with
	// namespace + ":". Two calls with the same server and namespace are
	// two processes sharing one backend.
	NewRedis func(rdb redis.UniversalClient, namespace string, o Options) (Backend, error)
	// NewEngine returns an engine (one worker process) over b, calling
	// the provider api.
	NewEngine func(b Backend, api provider.API) Worker
}

// Environment variables that point the suite at a real Redis server.
const (
	AddrEnv         = redisaddr.Env
	AllowForeignEnv = redisaddr.AllowForeignEnv
)

// Run runs lab 10's suite on impl. Without REDIS_ADDR the Redis half of
// every case runs on an embedded miniredis; with it, against that server,
// and Run fails at once, with one line, when the server cannot be reached
// or holds keys outside "labkit:".
func Run(t *testing.T, impl Impl) {
	t.Helper()
	if impl.NewMemory == nil || impl.NewRedis == nil || impl.NewEngine == nil {
		t.Fatal("enginesuite.Run: Impl needs NewMemory, NewRedis and NewEngine")
	}
	addr := os.Getenv(AddrEnv)
	if addr == "" {
		suites.Run(t, Lab, tests, func(t *testing.T, h *suites.History) *target {
			return &target{impl: impl, t: t}
		})
		return
	}
	srv, err := connectReal(addr, os.Getenv(AllowForeignEnv) == "1")
	if err != nil {
		t.Fatal(err)
	}
	suites.RunRealTime(t, Lab, tests, func(t *testing.T, h *suites.History) *target {
		return &target{impl: impl, real: srv, t: t}
	})
}
