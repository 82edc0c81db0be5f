package retry

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

type probeHintErr struct{ d time.Duration }

func (e probeHintErr) Error() string             { return "503 with Retry-After " + e.d.String() }
func (e probeHintErr) StatusCode() int           { return 503 }
func (e probeHintErr) RetryAfter() time.Duration { return e.d }

// Timeout 100ms: attempt 1 fails at once with a 50ms hint, attempt 2 starts
// at 50ms and hangs: its context must end at the call's deadline, 100ms.
func TestProbeSecondAttemptCutAtCallDeadline(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		start := time.Now()
		var ends []time.Duration
		p := Policy{MaxAttempts: 3, Base: time.Nanosecond, Cap: time.Nanosecond, Timeout: 100 * time.Millisecond,
			Rand: rand.New(rand.NewPCG(1, 1))}
		calls := 0
		_ = p.Do(context.Background(), func(ctx context.Context) error {
			calls++
			if calls == 1 {
				return probeHintErr{50 * time.Millisecond}
			}
			dl, ok := ctx.Deadline()
			if !ok || !dl.Equal(start.Add(100*time.Millisecond)) {
				t.Errorf("attempt %d: ctx deadline = %v (set %v), want start+100ms", calls, dl.Sub(start), ok)
			}
			<-ctx.Done()
			ends = append(ends, time.Since(start))
			return ctx.Err()
		})
		if len(ends) == 0 || ends[0] != 100*time.Millisecond {
			t.Errorf("hanging attempt 2 cut off at %v, want 100ms", ends)
		}
	})
}
