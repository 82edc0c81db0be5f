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

func TestProbeAttemptContextEndsAtCallDeadline(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 5, Base: time.Millisecond, Cap: time.Millisecond, Timeout: 100 * time.Millisecond, Rand: probeRand(5)}
		start := time.Now()
		var dl2 time.Time
		calls := 0
		err := p.Do(context.Background(), func(ctx context.Context) error {
			calls++
			if calls == 1 {
				time.Sleep(60 * time.Millisecond)
				return errors.New("connection reset")
			}
			dl2, _ = ctx.Deadline()
			<-ctx.Done()
			return fmt.Errorf("attempt cut off: %w", ctx.Err())
		})
		if err == nil {
			t.Fatal("Do returned nil")
		}
		if calls != 2 {
			t.Fatalf("%d attempts, want 2", calls)
		}
		if want := start.Add(100 * time.Millisecond); !dl2.Equal(want) {
			t.Fatalf("attempt 2's deadline at t=%v, want t=100ms (the call's deadline)", dl2.Sub(start))
		}
		if el := time.Since(start); el != 100*time.Millisecond {
			t.Fatalf("Do returned at t=%v, want t=100ms", el)
		}
	})
}
