package backpressure

import (
	"math"
	"testing"
	"time"
)

func TestProbeLongRecoveryClamped(t *testing.T) {
	f, err := ForecastBacklog(math.MaxInt64, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if f.Recovery != time.Duration(math.MaxInt64) || f.Never {
		t.Errorf("recovery of MaxInt64 jobs at 1/s: %v (never=%v), want the longest Duration", f.Recovery, f.Never)
	}
	f, _ = ForecastBacklog(12000, 80, 100)
	if f.Recovery != 600*time.Second {
		t.Errorf("12000 at 80/100: %v, want 10m0s", f.Recovery)
	}
}
