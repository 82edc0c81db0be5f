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

func TestProbeDelayIncludesCeiling(t *testing.T) {
	p := Policy{Base: 3, Cap: 3, Rand: probeRand(7)}
	var seen [4]int
	for i := 0; i < 4000; i++ {
		d := p.Delay(0)
		if d < 0 || d > 3 {
			t.Fatalf("Delay(0) = %d outside [0,3]", d)
		}
		seen[d]++
	}
	for v, n := range seen {
		if n < 800 {
			t.Fatalf("value %dns drawn %d times in 4000 (want about 1000): counts %v", v, n, seen)
		}
	}
}
