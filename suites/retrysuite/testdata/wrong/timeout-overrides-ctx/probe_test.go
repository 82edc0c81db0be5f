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

// Promise (README, "The deadline"): "The deadline is Policy.Timeout after the
// moment Do was called, or ctx's deadline, whichever is earlier ... Before
// any wait, if now + wait would reach the deadline, Do returns at once."
// (Policy.Timeout doc: "when both are set, the earlier one wins.")
func TestProbeEarlierCtxDeadlineWinsOverTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		p := Policy{MaxAttempts: 5, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond,
			Timeout: 10 * time.Second, Rand: probeRand(2)}
		calls := 0
		start := time.Now()
		// The server asks for 2s: past the ctx deadline (1s), inside Timeout (10s).
		err := p.Do(ctx, func(context.Context) error { calls++; return probeHTTPErr{code: 429, after: 2 * time.Second} })
		if el := time.Since(start); el != 0 {
			t.Errorf("Do returned after %v, want at once (the 2s wait would reach the 1s ctx deadline)", el)
		}
		if calls != 1 {
			t.Errorf("op called %d times, want 1", calls)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want it to wrap context.DeadlineExceeded", err)
		}
	})
}
