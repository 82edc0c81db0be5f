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

// Promise (README, "Delay (full jitter)"): "Delay(n) is one uniformly random
// duration in [0, Ceiling(n)]" — the lower half of the window included.
func TestProbeFullJitterUsesTheWholeWindow(t *testing.T) {
	p := Policy{Base: time.Second, Cap: time.Second, Rand: probeRand(21)}
	low := 0
	for i := 0; i < 2000; i++ {
		if p.Delay(0) < 250*time.Millisecond {
			low++
		}
	}
	if low < 300 { // expected ~500
		t.Errorf("%d of 2000 draws of Delay(0) fell in [0, 250ms), want about a quarter (uniform over [0, 1s])", low)
	}
}
