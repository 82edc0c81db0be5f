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

func TestProbeFirstSuccessDeposits(t *testing.T) {
	b := NewBudget(2)
	if !b.Withdraw() || b.Tokens() != 1 {
		t.Fatal("withdraw")
	}
	p := Policy{MaxAttempts: 3, Budget: b}
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if b.Tokens() != 2 {
		t.Fatalf("tokens after a first-attempt success = %d, want 2", b.Tokens())
	}
}
