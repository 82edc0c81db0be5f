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

func TestProbeGapsComeFromPolicyRand(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 4, Base: time.Second, Cap: time.Second, Rand: probeRand(42)}
		ref := Policy{MaxAttempts: 4, Base: time.Second, Cap: time.Second, Rand: probeRand(42)}
		var at []time.Time
		_ = p.Do(context.Background(), func(context.Context) error { at = append(at, time.Now()); return errors.New("reset") })
		if len(at) != 4 {
			t.Fatalf("%d attempts, want 4", len(at))
		}
		for i := 1; i < 4; i++ {
			if gap, want := at[i].Sub(at[i-1]), ref.Delay(i-1); gap != want {
				t.Fatalf("gap before attempt %d = %v, want Delay(%d) = %v from the same seed", i+1, gap, i-1, want)
			}
		}
	})
}
