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

// Promise (README): "Waits must be interruptible" and "ctx is done: ... during
// a wait" -> returned "at once, without sleeping".
func TestProbeCancelDuringWaitReturnsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := Policy{MaxAttempts: 3, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: probeRand(19)}
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		err := p.Do(ctx, func(context.Context) error { return probeHTTPErr{code: 429, after: 5 * time.Second} })
		if el := time.Since(start); el != 100*time.Millisecond {
			t.Errorf("Do returned after %v, want at the cancellation (100ms), not after the 5s wait", el)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}
