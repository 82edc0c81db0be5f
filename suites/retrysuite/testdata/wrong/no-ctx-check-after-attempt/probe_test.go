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

// Promise (README, "What Do returns"): returned "at once" when "ctx is done:
// ... after an attempt", and "Each retry takes one token just before its wait
// (after every other check)". A caller who cancelled during an attempt gets no
// retry, so no token is spent on it and nothing is drawn from Rand.
func TestProbeCancelDuringAttemptSpendsNoToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := NewBudget(5)
		calls := 0
		p := Policy{MaxAttempts: 3, Base: 100 * time.Millisecond, Cap: time.Second, Rand: probeRand(25), Budget: b}
		err := p.Do(ctx, func(context.Context) error {
			calls++
			cancel()                       // the caller gives up while the call is in flight...
			return probeHTTPErr{code: 503} // ...and the client still reports the server's 503
		})
		if calls != 1 {
			t.Errorf("op called %d times, want 1", calls)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if got := b.Tokens(); got != 5 {
			t.Errorf("Tokens() = %d after a cancellation during the first attempt, want 5 (no retry was due)", got)
		}
	})
}
