package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var (
	_ = context.Background
	_ = errors.New
	_ = fmt.Errorf
	_ = math.MaxInt64
	_ = rand.New
	_ sync.Mutex
	_ = time.Second
	_ = fakeclock.Run
)

type probeStatusErr struct{ code int }

func (e probeStatusErr) Error() string   { return fmt.Sprintf("status %d", e.code) }
func (e probeStatusErr) StatusCode() int { return e.code }

type probeHintErr struct{ hint time.Duration }

func (e probeHintErr) Error() string             { return fmt.Sprintf("429 retry after %v", e.hint) }
func (e probeHintErr) StatusCode() int           { return 429 }
func (e probeHintErr) RetryAfter() time.Duration { return e.hint }

func probeRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

func TestProbeStatus600NotRetried(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		for _, code := range []int{600, 999} {
			p := Policy{MaxAttempts: 3, Base: time.Millisecond, Cap: time.Millisecond, Rand: probeRand(8)}
			calls := 0
			_ = p.Do(context.Background(), func(context.Context) error { calls++; return probeStatusErr{code} })
			if calls != 1 {
				t.Fatalf("status %d: %d attempts, want 1", code, calls)
			}
		}
	})
}
