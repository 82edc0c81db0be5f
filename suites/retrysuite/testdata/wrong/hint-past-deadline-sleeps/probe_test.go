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

// Promise (README, "The deadline" and "What Do returns"): "Before any wait, if
// now + wait would reach the deadline, Do returns at once" — the wait
// being max(Delay(k-1), hint).
func TestProbeHintPastDeadlineGivesUpAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 5, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Timeout: time.Second, Rand: probeRand(13)}
		start := time.Now()
		calls := 0
		err := p.Do(context.Background(), func(context.Context) error { calls++; return probeHTTPErr{code: 429, after: 5 * time.Second} })
		if el := time.Since(start); el != 0 {
			t.Errorf("Do returned after %v, want at once (the 5s hint ends past the 1s deadline)", el)
		}
		if calls != 1 || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("calls = %d, err = %v; want 1 call and context.DeadlineExceeded", calls, err)
		}
	})
}
