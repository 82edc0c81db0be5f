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

func TestProbeRetryAfterNotCapped(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 3, Base: time.Millisecond, Cap: 10 * time.Millisecond, Rand: probeRand(3)}
		var at []time.Time
		err := p.Do(context.Background(), func(context.Context) error {
			at = append(at, time.Now())
			if len(at) == 1 {
				return fmt.Errorf("sign: %w", probeHintErr{time.Hour})
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		if len(at) != 2 {
			t.Fatalf("%d attempts, want 2", len(at))
		}
		if gap := at[1].Sub(at[0]); gap != time.Hour {
			t.Fatalf("gap after a Retry-After of 1h = %v, want exactly 1h", gap)
		}
	})
}
