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

// Promise (README, "The deadline"): "Every attempt's context ends at the
// deadline."
func TestProbeAttemptContextEndsAtTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 3, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, Timeout: time.Second, Rand: probeRand(26)}
		start := time.Now()
		err := p.Do(context.Background(), func(ctx context.Context) error {
			if dl, ok := ctx.Deadline(); !ok || !dl.Equal(start.Add(time.Second)) {
				t.Errorf("attempt ctx deadline set=%v at %v, want start+1s", ok, dl.Sub(start))
				return errors.New("no deadline")
			}
			<-ctx.Done()
			return ctx.Err()
		})
		if el := time.Since(start); el != time.Second {
			t.Errorf("Do returned after %v, want 1s", el)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
	})
}
