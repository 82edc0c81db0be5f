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

// Promise (README, "The retry budget"): "Each retry takes one token just
// before its wait (after every other check); if there is none, the retry is
// not made." A retry that is not made (attempts used up) must not cost a token.
func TestProbeNoTokenSpentOnARetryThatIsNotMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(5)
		p := Policy{MaxAttempts: 2, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: probeRand(5), Budget: b}
		calls := 0
		_ = p.Do(context.Background(), func(context.Context) error { calls++; return probeHTTPErr{code: 503} })
		if calls != 2 {
			t.Fatalf("op called %d times, want 2", calls)
		}
		if got := b.Tokens(); got != 4 {
			t.Errorf("after one retry, Tokens() = %d, want 4 (one retry was made, one token taken)", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(5)
		p := Policy{MaxAttempts: 5, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: probeRand(5),
			Budget: b, Timeout: time.Second}
		// The hint ends past the deadline: Do gives up at once, no retry made.
		_ = p.Do(context.Background(), func(context.Context) error { return probeHTTPErr{code: 429, after: 5 * time.Second} })
		if got := b.Tokens(); got != 5 {
			t.Errorf("no retry made (deadline), Tokens() = %d, want 5", got)
		}
	})
}
