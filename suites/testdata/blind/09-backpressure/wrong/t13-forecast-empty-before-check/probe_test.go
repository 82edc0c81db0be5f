package backpressure

import (
	"errors"
	"math"
	"testing"
)

func TestProbeEmptyBacklogStillValidated(t *testing.T) {
	for _, c := range [][2]float64{{math.NaN(), 1}, {1, -1}, {math.Inf(1), 2}} {
		if _, err := ForecastBacklog(0, c[0], c[1]); !errors.Is(err, ErrInvalidRate) {
			t.Errorf("ForecastBacklog(0, %v, %v) = %v, want ErrInvalidRate", c[0], c[1], err)
		}
	}
	f, err := ForecastBacklog(12000, 80, 100)
	if err != nil || f.Recovery.Seconds() != 600 {
		t.Fatalf("12000/(100-80): %v %v", f, err)
	}
}
