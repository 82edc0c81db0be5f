package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = fakeclock.Now
var _ = context.Background
var _ = math.MaxInt64
var _ = rand.New

type maxSrc struct{}

func (maxSrc) Uint64() uint64 { return math.MaxUint64 }

type statusErr struct {
	code int
	ra   time.Duration
}

func (e statusErr) Error() string             { return fmt.Sprintf("status %d", e.code) }
func (e statusErr) StatusCode() int           { return e.code }
func (e statusErr) RetryAfter() time.Duration { return e.ra }

func TestProbeHintNotCapped(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 2, Base: time.Millisecond, Cap: time.Second, Rand: rand.New(maxSrc{})}
		var at []time.Duration
		p.Do(context.Background(), func(ctx context.Context) error {
			at = append(at, fakeclock.Elapsed())
			return statusErr{code: 429, ra: 72 * time.Hour}
		})
		if len(at) != 2 || at[1]-at[0] != 72*time.Hour {
			t.Fatalf("attempts at %v, want a 72h gap", at)
		}
	})
}
