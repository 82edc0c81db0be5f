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

func TestProbeEarlierCtxDeadlineWins(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		p := Policy{MaxAttempts: 5, Base: time.Nanosecond, Cap: time.Nanosecond, Timeout: time.Second, Rand: probeRand(4)}
		start := time.Now()
		err := p.Do(ctx, func(context.Context) error { return probeHintErr{100 * time.Millisecond} })
		if el := time.Since(start); el != 0 {
			t.Fatalf("Do returned at t=%v, want at once: the 100ms wait would cross the ctx deadline at 50ms", el)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
	})
}
