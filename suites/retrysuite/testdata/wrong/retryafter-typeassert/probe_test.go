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

// Promise (RetryAfter doc): "returns the Retry-After hint carried by err (the
// first RetryAfterer in its chain)"; README: "If the failed attempt's error
// carries a positive hint (RetryAfter(err)), the wait is max(Delay(k-1), hint)."
func TestProbeWrappedHintIsHonoured(t *testing.T) {
	wrapped := fmt.Errorf("send doc-1: %w", probeHTTPErr{code: 429, after: 2 * time.Second})
	if d, ok := RetryAfter(wrapped); !ok || d != 2*time.Second {
		t.Errorf("RetryAfter(wrapped 429) = %v, %v; want 2s, true", d, ok)
	}
	synctest.Test(t, func(t *testing.T) {
		var r probeRecorder
		p := Policy{MaxAttempts: 2, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: probeRand(17)}
		_ = p.Do(context.Background(), func(context.Context) error { r.starts = append(r.starts, time.Now()); return wrapped })
		if g := r.gaps(); len(g) != 1 || g[0] < 2*time.Second {
			t.Errorf("gaps = %v, want one gap of at least the 2s hint", g)
		}
	})
}
