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

func TestProbeSuccessAfterCancelIsSuccess(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		b := NewBudget(1)
		if !b.Withdraw() {
			t.Fatal("Withdraw on a full budget of 1 failed")
		}
		p := Policy{MaxAttempts: 3, Base: time.Second, Cap: time.Second, Rand: probeRand(2), Budget: b}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		err := p.Do(ctx, func(context.Context) error { cancel(); return nil })
		if err != nil {
			t.Fatalf("Do = %v after an attempt that succeeded, want nil", err)
		}
		if got := b.Tokens(); got != 1 {
			t.Fatalf("budget holds %d tokens, want 1 (the success puts one back)", got)
		}
	})
}
