package retry

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"
)

var (
	_ = context.Background
	_ = errors.Is
	_ = big.NewInt
	_ = synctest.Test
)

// probeHTTPErr is a remote API answer: a status code and an optional
// Retry-After hint.
type probeHTTPErr struct {
	code  int
	after time.Duration
}

func (e probeHTTPErr) Error() string {
	return fmt.Sprintf("remote: HTTP %d (retry after %v)", e.code, e.after)
}
func (e probeHTTPErr) StatusCode() int           { return e.code }
func (e probeHTTPErr) RetryAfter() time.Duration { return e.after }

func probeRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

// probeRecorder counts calls of op and records when each attempt started.
type probeRecorder struct {
	starts []time.Time
}

func (r *probeRecorder) gaps() []time.Duration {
	var g []time.Duration
	for i := 1; i < len(r.starts); i++ {
		g = append(g, r.starts[i].Sub(r.starts[i-1]))
	}
	return g
}

// Promise (README, "The deadline"): "No attempt starts at or after it. Before
// any wait, if now + wait would reach the deadline, Do returns at once."
// A wait that ends exactly at the deadline reaches it.
func TestProbeWaitEndingExactlyAtDeadlineIsNotMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 5, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Timeout: time.Second, Rand: probeRand(8)}
		calls := 0
		start := time.Now()
		err := p.Do(context.Background(), func(context.Context) error {
			calls++
			if d := time.Since(start); d >= time.Second {
				t.Errorf("attempt %d started at %v, at or after the 1s deadline", calls, d)
			}
			return probeHTTPErr{code: 429, after: time.Second}
		})
		if el := time.Since(start); el != 0 {
			t.Errorf("Do returned after %v, want at once: now+1s reaches the deadline", el)
		}
		if calls != 1 {
			t.Errorf("op called %d times, want 1", calls)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want it to wrap context.DeadlineExceeded", err)
		}
	})
}
