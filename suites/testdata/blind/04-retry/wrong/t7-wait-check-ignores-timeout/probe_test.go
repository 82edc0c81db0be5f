package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

type probeHintErr struct{ d time.Duration }

func (e probeHintErr) Error() string             { return "503 with Retry-After " + e.d.String() }
func (e probeHintErr) StatusCode() int           { return 503 }
func (e probeHintErr) RetryAfter() time.Duration { return e.d }

// Timeout 100ms, ctx without deadline, every attempt fails with a 60ms
// Retry-After: attempt 1 at 0, attempt 2 at 60ms, and the next wait would
// end at 120ms, past the deadline: Do must give up then, with
// context.DeadlineExceeded, and no attempt may start at or after 100ms.
func TestProbeTimeoutDeadlineStopsWaits(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		start := time.Now()
		var starts []time.Duration
		p := Policy{MaxAttempts: 10, Base: time.Nanosecond, Cap: time.Nanosecond,
			Timeout: 100 * time.Millisecond, Rand: rand.New(rand.NewPCG(1, 2))}
		err := p.Do(context.Background(), func(ctx context.Context) error {
			starts = append(starts, time.Since(start))
			return probeHintErr{60 * time.Millisecond}
		})
		for i, s := range starts {
			if s >= 100*time.Millisecond {
				t.Errorf("attempt %d started at %v, at or after the 100ms deadline", i+1, s)
			}
		}
		if len(starts) != 2 {
			t.Errorf("attempts = %d (%v), want 2", len(starts), starts)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want it to wrap context.DeadlineExceeded", err)
		}
		if el := time.Since(start); el != 60*time.Millisecond {
			t.Errorf("Do returned after %v, want at once after attempt 2 (60ms)", el)
		}
	})
}
