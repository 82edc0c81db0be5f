package retry

import (
	"math"
	"testing"
	"time"
)

// Base·2ⁿ for Base = 5ns and n = 62 is 5·2⁶² ns, far above the largest
// Duration, so with Cap the largest Duration the ceiling is Cap.
func TestProbeCeilingAtLargestCap(t *testing.T) {
	p := Policy{Base: 5, Cap: time.Duration(math.MaxInt64)}
	for _, n := range []int{61, 62} {
		if got := p.Ceiling(n); got != p.Cap {
			t.Errorf("Ceiling(%d) with Base 5ns, Cap max = %d, want %d", n, got, p.Cap)
		}
	}
}
