package retry

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

type probeStatusErr int

func (e probeStatusErr) Error() string   { return fmt.Sprintf("status %d", int(e)) }
func (e probeStatusErr) StatusCode() int { return int(e) }

// Every status from 500 to 599 is retried; 600 is not.
func TestProbe5xxBoundsRetried(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		for _, tc := range []struct {
			code int
			want int
		}{{500, 2}, {599, 2}, {600, 1}, {499, 1}} {
			p := Policy{MaxAttempts: 2, Base: time.Millisecond, Cap: time.Millisecond, Rand: rand.New(rand.NewPCG(1, 1))}
			calls := 0
			_ = p.Do(context.Background(), func(context.Context) error { calls++; return fmt.Errorf("api: %w", probeStatusErr(tc.code)) })
			if calls != tc.want {
				t.Errorf("status %d: attempts = %d, want %d", tc.code, calls, tc.want)
			}
		}
	})
}
