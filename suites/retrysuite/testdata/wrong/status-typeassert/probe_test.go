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

// Promise (StatusCoder / Retryable doc): "Retryable looks for one anywhere in
// an error's chain (errors.As)"; 400 "fail[s] the same way every time".
func TestProbeWrappedClientErrorIsNotRetried(t *testing.T) {
	wrapped := fmt.Errorf("send doc-1: %w", probeHTTPErr{code: 400})
	if Retryable(wrapped) {
		t.Errorf("Retryable(wrapped 400) = true, want false")
	}
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		p := Policy{MaxAttempts: 3, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: probeRand(18)}
		_ = p.Do(context.Background(), func(context.Context) error { calls++; return wrapped })
		if calls != 1 {
			t.Errorf("op called %d times for a wrapped 400, want 1", calls)
		}
	})
}
