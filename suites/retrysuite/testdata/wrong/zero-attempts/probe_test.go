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

// Promise (README, "Attempts and retries"; Policy.MaxAttempts doc):
// "MaxAttempts counts attempts, the first one included ... Values below 1
// count as 1." and (Policy doc) "The zero value makes one attempt and never
// retries".
func TestProbeMaxAttemptsBelowOneMakesOneAttempt(t *testing.T) {
	for _, max := range []int{0, -3} {
		synctest.Test(t, func(t *testing.T) {
			calls := 0
			fail := probeHTTPErr{code: 503}
			p := Policy{MaxAttempts: max, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: probeRand(1)}
			err := p.Do(context.Background(), func(context.Context) error { calls++; return fail })
			if calls != 1 {
				t.Errorf("MaxAttempts=%d: op called %d times, want exactly 1", max, calls)
			}
			if !errors.Is(err, fail) {
				t.Errorf("MaxAttempts=%d: Do returned %v, want an error wrapping the attempt's error", max, err)
			}
		})
	}
}
