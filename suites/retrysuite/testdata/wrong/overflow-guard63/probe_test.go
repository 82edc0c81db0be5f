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

// Promise (README, "Ceiling"): "Ceiling(n) = min(Cap, Base·2ⁿ) ... It must be
// right for every n"; (Ceiling doc) "computed without overflow for every n
// ... It is never negative."
func TestProbeCeilingRightForEveryN(t *testing.T) {
	p := Policy{Base: 100 * time.Millisecond, Cap: 10 * time.Second, Rand: probeRand(15)}
	for n := 0; n <= 200; n++ {
		exact := new(big.Int).Lsh(big.NewInt(int64(p.Base)), uint(n))
		want := p.Cap
		if exact.Cmp(big.NewInt(int64(p.Cap))) < 0 {
			want = time.Duration(exact.Int64())
		}
		if got := p.Ceiling(n); got != want {
			t.Errorf("Ceiling(%d) = %v, want %v", n, got, want)
		}
	}
}
