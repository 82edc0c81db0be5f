package backpressure

import (
	"math"
	"testing"
	"time"
)

func TestProbeLongRecoveryClamped(t *testing.T) {
	// 317 years of backlog: longer than the longest Duration
	secs := 317.0 * 365 * 24 * 3600
	f, err := ForecastBacklog(int(secs), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if f.Recovery != time.Duration(math.MaxInt64) || f.Never {
		t.Fatalf("recovery %v never %v, want the longest Duration", f.Recovery, f.Never)
	}
	f, err = ForecastBacklog(12000, 80, 100)
	if err != nil || f.Recovery != 600*time.Second {
		t.Fatalf("600 s case: %v %v", f, err)
	}
}
