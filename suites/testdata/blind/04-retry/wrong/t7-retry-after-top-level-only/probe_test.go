package retry

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

type probeHintErr struct{ d time.Duration }

func (e probeHintErr) Error() string             { return "429 with Retry-After " + e.d.String() }
func (e probeHintErr) StatusCode() int           { return 429 }
func (e probeHintErr) RetryAfter() time.Duration { return e.d }

// A Retry-After hint wrapped twice still sets the wait.
func TestProbeWrappedRetryAfterHonoured(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		var starts []time.Time
		p := Policy{MaxAttempts: 2, Base: time.Millisecond, Cap: time.Millisecond, Rand: rand.New(rand.NewPCG(1, 1))}
		_ = p.Do(context.Background(), func(context.Context) error {
			starts = append(starts, time.Now())
			return fmt.Errorf("send: %w", fmt.Errorf("http: %w", probeHintErr{5 * time.Second}))
		})
		if len(starts) != 2 {
			t.Fatalf("attempts = %d, want 2", len(starts))
		}
		if gap := starts[1].Sub(starts[0]); gap != 5*time.Second {
			t.Errorf("gap between attempts = %v, want the 5s hint", gap)
		}
	})
}
