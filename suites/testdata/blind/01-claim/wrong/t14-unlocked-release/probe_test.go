package claim

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Run with -race: the release of a failed key must be synchronised with
// other callers of the store.
func TestProbeReleaseIsSynchronised(t *testing.T) {
	s := New()
	go s.Do(context.Background(), "a", func(context.Context) (string, error) { return "", errors.New("fail") })
	time.Sleep(5 * time.Millisecond) // no happens-before edge on purpose
	v, err := s.Do(context.Background(), "b", func(context.Context) (string, error) { return "vb", nil })
	if v != "vb" || err != nil {
		t.Errorf("got (%q, %v)", v, err)
	}
	time.Sleep(time.Millisecond)
}
