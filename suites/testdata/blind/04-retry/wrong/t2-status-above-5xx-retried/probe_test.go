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

func TestProbeStatus600NotRetried(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		for _, c := range []int{600, 700} {
			p := Policy{MaxAttempts: 3, Base: time.Millisecond, Cap: time.Millisecond, Rand: rand.New(maxSrc{})}
			n := 0
			p.Do(context.Background(), func(context.Context) error { n++; return statusErr{code: c} })
			if n != 1 {
				t.Fatalf("status %d: %d attempts, want 1", c, n)
			}
		}
	})
}
