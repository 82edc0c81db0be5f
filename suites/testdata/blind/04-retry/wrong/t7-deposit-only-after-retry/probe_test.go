package retry

import (
	"context"
	"testing"
)

// A first attempt that succeeds puts a token back too.
func TestProbeFirstAttemptSuccessDeposits(t *testing.T) {
	b := NewBudget(3)
	if !b.Withdraw() || !b.Withdraw() {
		t.Fatal("Withdraw from a full budget failed")
	}
	p := Policy{MaxAttempts: 3, Budget: b}
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Fatalf("Do = %v, want nil", err)
	}
	if got := b.Tokens(); got != 2 {
		t.Errorf("tokens after a first-attempt success = %d, want 2 (1 left + 1 deposited)", got)
	}
}
