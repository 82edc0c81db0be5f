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

func TestProbeCancelDuringAttempt(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		b := NewBudget(3)
		p := Policy{MaxAttempts: 5, Base: time.Second, Cap: time.Second, Rand: rand.New(rand.NewPCG(5, 5)), Budget: b}
		ref := rand.New(rand.NewPCG(5, 5))
		ctx, cancel := context.WithCancel(context.Background())
		err := p.Do(ctx, func(context.Context) error { cancel(); return statusErr{code: 503} })
		if !errors.Is(err, context.Canceled) || !errors.As(err, new(statusErr)) {
			t.Fatalf("err %v", err)
		}
		if b.Tokens() != 3 {
			t.Fatalf("tokens %d, want 3", b.Tokens())
		}
		if p.Rand.Uint64() != ref.Uint64() {
			t.Fatal("Rand was drawn after a cancelled attempt")
		}
	})
}
