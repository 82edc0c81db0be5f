package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

var errProbeReset = errors.New("connection reset")

// An empty budget refuses the retry: the error wraps ErrBudgetExhausted
// and the last attempt's error.
func TestProbeBudgetErrorWrapsLast(t *testing.T) {
	p := Policy{MaxAttempts: 3, Base: time.Millisecond, Cap: time.Millisecond,
		Rand: rand.New(rand.NewPCG(1, 1)), Budget: NewBudget(0)}
	calls := 0
	err := p.Do(context.Background(), func(context.Context) error { calls++; return errProbeReset })
	if calls != 1 {
		t.Errorf("calls = %d, want 1", calls)
	}
	if !errors.Is(err, ErrBudgetExhausted) {
		t.Errorf("err = %v, want it to wrap ErrBudgetExhausted", err)
	}
	if !errors.Is(err, errProbeReset) {
		t.Errorf("err = %v, want it to wrap the last attempt's error", err)
	}
}
