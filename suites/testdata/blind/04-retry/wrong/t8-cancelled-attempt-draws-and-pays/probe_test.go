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

func TestProbeCancelDuringAttemptNoDrawNoToken(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		b := NewBudget(5)
		r := probeRand(21)
		p := Policy{MaxAttempts: 3, Base: time.Second, Cap: time.Second, Rand: r, Budget: b}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		calls := 0
		err := p.Do(ctx, func(context.Context) error { calls++; cancel(); return probeStatusErr{503} })
		if !errors.Is(err, context.Canceled) || !errors.As(err, new(probeStatusErr)) {
			t.Fatalf("err = %v, want it to wrap context.Canceled and the 503", err)
		}
		if calls != 1 {
			t.Fatalf("%d attempts, want 1", calls)
		}
		if got := b.Tokens(); got != 5 {
			t.Fatalf("budget holds %d tokens after a cancelled call, want 5", got)
		}
		if got, want := r.Uint64(), probeRand(21).Uint64(); got != want {
			t.Fatal("Do drew from Policy.Rand although ctx was done after the attempt")
		}
	})
}
