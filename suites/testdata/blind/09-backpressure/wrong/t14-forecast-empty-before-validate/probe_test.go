package backpressure

import (
	"errors"
	"math"
	"testing"
)

func TestProbeEmptyBacklogInvalidRate(t *testing.T) {
	for _, r := range [][2]float64{{math.NaN(), 1}, {1, -1}, {math.Inf(1), 1}} {
		if _, err := ForecastBacklog(0, r[0], r[1]); !errors.Is(err, ErrInvalidRate) {
			t.Errorf("ForecastBacklog(0, %v, %v): %v, want ErrInvalidRate", r[0], r[1], err)
		}
	}
}
