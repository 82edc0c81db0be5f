package claim

import (
	"context"
	"errors"
	"testing"
)

// Promise (Do doc comment): "If work fails, the failing caller gets work's
// error and the key is released: the next caller for the key runs work again."
func TestProbeFailureReleasesKey(t *testing.T) {
	s := New()
	declined := errors.New("card declined")
	s.Do(context.Background(), "task-42", func(context.Context) (string, error) { return "", declined })
	ran := false
	v, err := s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
		ran = true
		return "sent", nil
	})
	if !ran || v != "sent" || err != nil {
		t.Fatalf("after a failure, next Do = (%q, %v), work ran=%v; want the work to run again and return (sent, nil)", v, err, ran)
	}
}
