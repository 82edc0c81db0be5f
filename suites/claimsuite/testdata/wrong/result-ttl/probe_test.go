package claim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// Promise (README): "A caller that arrives after the work succeeded gets the
// stored value and a nil error, without running work, however much later it
// arrives." Lab goal: "at most once per key ... at the same time or an hour apart".
func TestProbeStoredResultNeverExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		s.Do(context.Background(), "task-42", func(context.Context) (string, error) { return "sent", nil })
		time.Sleep(72 * time.Hour) // virtual: the queue redelivers three days later
		ran := false
		v, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
			ran = true
			return "sent-again", nil
		})
		if ran || v != "sent" || err != nil {
			t.Errorf("Do 72h after success = (%q, %v), work ran=%v; want (sent, nil), no second run", v, err, ran)
		}
	})
}
