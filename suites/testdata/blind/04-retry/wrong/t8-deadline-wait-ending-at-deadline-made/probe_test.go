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

func TestProbeWaitEndingAtDeadlineNotMade(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 5, Base: time.Nanosecond, Cap: time.Nanosecond, Timeout: 100 * time.Millisecond, Rand: probeRand(9)}
		start := time.Now()
		calls := 0
		last := probeHintErr{100 * time.Millisecond}
		err := p.Do(context.Background(), func(context.Context) error { calls++; return last })
		if el := time.Since(start); el != 0 {
			t.Fatalf("Do returned at t=%v, want at once (t=0)", el)
		}
		if calls != 1 {
			t.Fatalf("%d attempts, want 1", calls)
		}
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, new(probeHintErr)) {
			t.Fatalf("err = %v, want it to wrap DeadlineExceeded and the last error", err)
		}
	})
}
