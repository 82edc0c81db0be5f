package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var (
	_ = context.Background
	_ = errors.New
	_ = fmt.Errorf
	_ = math.MaxInt64
	_ = rand.New
	_ sync.Mutex
	_ = time.Second
	_ = fakeclock.Run
)

type probeStatusErr struct{ code int }

func (e probeStatusErr) Error() string   { return fmt.Sprintf("status %d", e.code) }
func (e probeStatusErr) StatusCode() int { return e.code }

type probeHintErr struct{ hint time.Duration }

func (e probeHintErr) Error() string             { return fmt.Sprintf("429 retry after %v", e.hint) }
func (e probeHintErr) StatusCode() int           { return 429 }
func (e probeHintErr) RetryAfter() time.Duration { return e.hint }

func probeRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

func TestProbeCeilingNoOverflow(t *testing.T) {
	p := Policy{Base: 5, Cap: math.MaxInt64}
	if got := p.Ceiling(62); got != math.MaxInt64 {
		t.Fatalf("Base=5ns Cap=MaxInt64: Ceiling(62) = %d, want %d", got, int64(math.MaxInt64))
	}
	q := Policy{Base: time.Second, Cap: time.Hour}
	for n := 40; n <= 70; n++ {
		if got := q.Ceiling(n); got != time.Hour {
			t.Fatalf("Base=1s Cap=1h: Ceiling(%d) = %v, want 1h", n, got)
		}
	}
}
