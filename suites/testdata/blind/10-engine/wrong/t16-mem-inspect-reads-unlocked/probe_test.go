package engine

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// Inspect beside Checkpoint: every field Inspect reports must be read under
// the same lock that Checkpoint writes under (run with -race). The
// inspecting goroutine runs without pause while the test checkpoints and
// yields, so their calls interleave.
func TestProbeInspectBesideCheckpoint(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := NewMemory(Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	j := Job{ID: "j", Account: "acc", Steps: []Step{{DocumentID: "d", Recipient: "a@x.io"}}}
	if _, err := m.Submit(ctx, j); err != nil {
		t.Fatal(err)
	}
	l, err := m.Lease(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		close(started)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := m.Inspect(ctx, "j"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	<-started
	for i := 0; i < 3000; i++ {
		if l, err = m.Checkpoint(ctx, l, i%2); err != nil {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	close(stop)
	<-done
}
