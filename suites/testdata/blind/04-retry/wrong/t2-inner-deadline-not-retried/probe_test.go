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

func TestProbeInnerTimeoutRetried(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 3, Base: time.Millisecond, Cap: time.Millisecond, Rand: rand.New(rand.NewPCG(1, 1))}
		n := 0
		err := p.Do(context.Background(), func(ctx context.Context) error {
			n++
			if n == 1 {
				return fmt.Errorf("dial provider: %w", context.DeadlineExceeded)
			}
			return nil
		})
		if err != nil || n != 2 {
			t.Fatalf("Do = %v after %d attempts, want nil after 2", err, n)
		}
	})
}
