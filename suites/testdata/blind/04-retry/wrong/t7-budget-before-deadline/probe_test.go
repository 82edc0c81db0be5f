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

func (e probeHintErr) Error() string             { return "429 with Retry-After " + e.d.String() }
func (e probeHintErr) StatusCode() int           { return 429 }
func (e probeHintErr) RetryAfter() time.Duration { return e.d }

// The deadline forbids the retry (its Retry-After ends past it): no token
// is taken, and the error wraps context.DeadlineExceeded.
func TestProbeDeadlineForbiddenRetryTakesNoToken(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		b := NewBudget(3)
		p := Policy{MaxAttempts: 4, Base: time.Millisecond, Cap: time.Millisecond, Timeout: 100 * time.Millisecond,
			Rand: rand.New(rand.NewPCG(1, 1)), Budget: b}
		err := p.Do(context.Background(), func(context.Context) error { return probeHintErr{time.Second} })
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want it to wrap context.DeadlineExceeded", err)
		}
		if got := b.Tokens(); got != 3 {
			t.Errorf("tokens = %d, want 3: a retry the deadline forbids takes no token", got)
		}
	})
}
