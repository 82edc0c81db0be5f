package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

type probeStatusErr int

func (e probeStatusErr) Error() string   { return fmt.Sprintf("status %d", int(e)) }
func (e probeStatusErr) StatusCode() int { return int(e) }

// A 400 stops Do after one attempt, and Do draws nothing for it; neither
// does it for the last of MaxAttempts attempts.
func TestProbeNoDrawWhenNotRetrying(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  int
		err  error
	}{
		{"not retryable", 5, probeStatusErr(400)},
		{"max attempts", 1, probeStatusErr(503)},
	} {
		p := Policy{MaxAttempts: tc.max, Base: time.Millisecond, Cap: time.Second, Rand: rand.New(rand.NewPCG(3, 4))}
		twin := rand.New(rand.NewPCG(3, 4))
		err := p.Do(context.Background(), func(context.Context) error { return tc.err })
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: err = %v, want it to wrap %v", tc.name, err, tc.err)
		}
		if p.Rand.Uint64() != twin.Uint64() {
			t.Errorf("%s: Do drew from Policy.Rand although it made no wait", tc.name)
		}
	}
}
