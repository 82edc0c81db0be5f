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

func TestProbeDeadlineBeforeBudget(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		b := NewBudget(3)
		p := Policy{MaxAttempts: 5, Base: 2 * time.Second, Cap: 2 * time.Second, Timeout: time.Second, Rand: rand.New(maxSrc{}), Budget: b}
		err := p.Do(context.Background(), func(ctx context.Context) error { return statusErr{code: 503} })
		if !errors.Is(err, context.DeadlineExceeded) || b.Tokens() != 3 {
			t.Fatalf("err %v, tokens %d (want 3)", err, b.Tokens())
		}
		p.Budget = NewBudget(0)
		err = p.Do(context.Background(), func(ctx context.Context) error { return statusErr{code: 503} })
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("empty budget, deadline first: %v", err)
		}
	})
}
