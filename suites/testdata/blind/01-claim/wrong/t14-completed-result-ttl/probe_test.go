package claim

import (
	"context"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestProbeResultKeptForDays(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		s := New()
		s.Do(context.Background(), "k", func(context.Context) (string, error) { return "v1", nil })
		fakeclock.Advance(25 * time.Hour)
		ran := false
		v, err := s.Do(context.Background(), "k", func(context.Context) (string, error) { ran = true; return "v2", nil })
		if ran || v != "v1" || err != nil {
			t.Errorf("25 h later: ran=%v (%q, %v), want stored v1", ran, v, err)
		}
	})
}
