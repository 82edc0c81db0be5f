package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

type probeStatusErr int

func (e probeStatusErr) Error() string   { return "status " + string(rune('0'+int(e)/100)) + "xx" }
func (e probeStatusErr) StatusCode() int { return int(e) }

// The caller cancels while attempt 1 runs, and the attempt then fails with a
// 503: Do must stop at once, with no draw from Rand and no budget token.
func TestProbeCancelDuringAttemptTakesNothing(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := NewBudget(5)
		p := Policy{MaxAttempts: 5, Base: 10 * time.Millisecond, Cap: time.Second,
			Rand: rand.New(rand.NewPCG(7, 7)), Budget: b}
		twin := rand.New(rand.NewPCG(7, 7))
		calls := 0
		err := p.Do(ctx, func(context.Context) error {
			calls++
			cancel()
			return probeStatusErr(503)
		})
		if calls != 1 {
			t.Errorf("calls = %d, want 1", calls)
		}
		if !errors.Is(err, context.Canceled) || !errors.Is(err, probeStatusErr(503)) {
			t.Errorf("err = %v, want it to wrap context.Canceled and the 503", err)
		}
		if got := b.Tokens(); got != 5 {
			t.Errorf("budget tokens = %d after a cancelled call, want 5 (no token taken)", got)
		}
		if p.Rand.Uint64() != twin.Uint64() {
			t.Errorf("Do drew from Policy.Rand although it stopped because of the context")
		}
	})
}
