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

func TestProbeWaitEndingAtDeadline(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 5, Base: time.Second, Cap: time.Second, Timeout: time.Second, Rand: rand.New(maxSrc{})}
		n := 0
		err := p.Do(context.Background(), func(ctx context.Context) error { n++; return statusErr{code: 503} })
		if el := fakeclock.Elapsed(); el != 0 || n != 1 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("returned at %v after %d attempts: %v", el, n, err)
		}
	})
}
