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

// Promise (README, "Which errors are retried"; Retryable doc): "408, 429 and
// every 5xx are retried".
func TestProbeEvery5xxIsRetried(t *testing.T) {
	for _, code := range []int{501, 505, 507, 511, 599} {
		if !Retryable(probeHTTPErr{code: code}) {
			t.Errorf("Retryable(HTTP %d) = false, want true (every 5xx is retried)", code)
		}
		synctest.Test(t, func(t *testing.T) {
			calls := 0
			p := Policy{MaxAttempts: 3, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Rand: probeRand(4)}
			err := p.Do(context.Background(), func(context.Context) error {
				calls++
				if calls == 1 {
					return probeHTTPErr{code: code}
				}
				return nil
			})
			if err != nil || calls != 2 {
				t.Errorf("HTTP %d then success: Do = %v after %d calls, want nil after 2", code, err, calls)
			}
		})
	}
}
