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
// duration in [0, Ceiling(n)] (inclusive)". With Ceiling = 3ns, each of the
// four values 0..3 must come up about a quarter of the time.
func TestProbeDelayWindowIncludesTheCeiling(t *testing.T) {
	p := Policy{Base: 3 * time.Nanosecond, Cap: 3 * time.Nanosecond, Rand: probeRand(3)}
	count := map[time.Duration]int{}
	for i := 0; i < 4000; i++ {
		d := p.Delay(0)
		if d < 0 || d > 3 {
			t.Fatalf("Delay(0) = %v, outside [0, 3ns]", d)
		}
		count[d]++
	}
	for v := time.Duration(0); v <= 3; v++ {
		if count[v] < 800 {
			t.Errorf("Delay(0) = %v came up %d times in 4000 draws, want about 1000 (window [0,3ns] inclusive)", v, count[v])
		}
	}
}
