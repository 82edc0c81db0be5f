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

// Promise (README, "Retry-After"): "If the failed attempt's error carries a
// positive hint (RetryAfter(err)), the wait is max(Delay(k-1), hint)", and
// (RetryAfter doc) the hint counts only "when it is positive". A zero or short
// hint never shortens the backoff.
func TestProbeShortOrZeroHintKeepsTheBackoff(t *testing.T) {
	if d, ok := RetryAfter(probeHTTPErr{code: 429, after: 0}); ok {
		t.Errorf("RetryAfter(hint 0) = %v, true; want 0, false", d)
	}
	synctest.Test(t, func(t *testing.T) {
		for _, hint := range []time.Duration{0, time.Millisecond} {
			mk := func() Policy {
				return Policy{MaxAttempts: 2, Base: time.Second, Cap: time.Second, Rand: probeRand(22)}
			}
			q := mk()
			want := max(q.Delay(0), hint)
			var r probeRecorder
			_ = mk().Do(context.Background(), func(context.Context) error {
				r.starts = append(r.starts, time.Now())
				return probeHTTPErr{code: 429, after: hint}
			})
			if g := r.gaps(); len(g) != 1 || g[0] != want {
				t.Errorf("hint %v: gaps = %v, want [%v] = max(Delay(0), hint)", hint, g, want)
			}
		}
	})
}
