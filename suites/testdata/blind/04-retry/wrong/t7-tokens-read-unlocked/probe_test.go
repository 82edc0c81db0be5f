package retry

import (
	"sync"
	"testing"
)

// Tokens, Withdraw and Deposit run concurrently on one Budget; under the
// race detector any unsynchronised access fails the test.
func TestProbeTokensConcurrentWithWithdraw(t *testing.T) {
	b := NewBudget(4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(3)
		go func() { defer wg.Done(); b.Withdraw() }()
		go func() { defer wg.Done(); _ = b.Tokens() }()
		go func() { defer wg.Done(); b.Deposit() }()
	}
	wg.Wait()
	if got := b.Tokens(); got < 0 || got > 4 {
		t.Errorf("Tokens = %d, out of [0, 4]", got)
	}
}
