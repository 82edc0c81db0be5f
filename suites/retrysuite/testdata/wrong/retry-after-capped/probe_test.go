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

// Promise (README, "Retry-After"): "the wait is max(Delay(k-1), hint). The
// hint is not capped by Cap." (Policy.Cap doc: "A server's Retry-After hint
// may still ask for a longer wait.")
func TestProbeHintLongerThanCapIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r probeRecorder
		p := Policy{MaxAttempts: 2, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: probeRand(16)}
		_ = p.Do(context.Background(), func(context.Context) error {
			r.starts = append(r.starts, time.Now())
			return probeHTTPErr{code: 429, after: time.Second}
		})
		if g := r.gaps(); len(g) != 1 || g[0] < time.Second {
			t.Errorf("gaps = %v, want one gap of at least the 1s hint (Cap is 100ms)", g)
		}
	})
}
