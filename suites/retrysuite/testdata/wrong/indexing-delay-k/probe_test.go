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

// Promise (README, "Indexing"): "After attempt k fails, Do waits Delay(k-1)
// before attempt k+1: the first retry waits Delay(0), at most Base."
func TestProbeFirstRetryWaitsAtMostBase(t *testing.T) {
	mk := func() Policy {
		return Policy{MaxAttempts: 4, Base: 100 * time.Millisecond, Cap: 10 * time.Second, Rand: probeRand(20)}
	}
	q := mk()
	want := []time.Duration{q.Delay(0), q.Delay(1), q.Delay(2)}
	synctest.Test(t, func(t *testing.T) {
		var r probeRecorder
		_ = mk().Do(context.Background(), func(context.Context) error { r.starts = append(r.starts, time.Now()); return probeHTTPErr{code: 503} })
		got := r.gaps()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("gaps = %v, want %v (Delay(0), Delay(1), Delay(2))", got, want)
		}
		if len(got) > 0 && got[0] > 100*time.Millisecond {
			t.Errorf("first retry waited %v, more than Base (100ms)", got[0])
		}
	})
}
