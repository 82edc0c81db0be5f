package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Of a Complete and a Fail of one lease, exactly one succeeds. The clock is
// the probe's hook: once armed, a second clock read by the same Fail call
// parks it (a correct Fail reads the clock once, under or before its lock,
// and never parks), and the Complete runs while it is parked.
func TestProbeCompleteAndFailHaveOneWinner(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	var (
		mu      sync.Mutex
		armed   bool
		calls   int
		blocked = make(chan struct{})
		release = make(chan struct{})
	)
	clock := func() time.Time {
		mu.Lock()
		park := false
		if armed {
			calls++
			park = calls == 2
		}
		mu.Unlock()
		if park {
			close(blocked)
			<-release
		}
		return t0
	}
	m, err := NewMemory(Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Submit(ctx, Job{ID: "j", Account: "acc", Steps: []Step{{DocumentID: "d", Recipient: "a@x.io"}}}); err != nil {
		t.Fatal(err)
	}
	l, err := m.Lease(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	armed = true
	mu.Unlock()
	failDone := make(chan error, 1)
	go func() { failDone <- m.Fail(ctx, l, errors.New("boom")) }()
	var failErr, completeErr error
	select {
	case failErr = <-failDone:
		mu.Lock()
		armed = false
		mu.Unlock()
		completeErr = m.Complete(ctx, l)
	case <-blocked:
		mu.Lock()
		armed = false
		mu.Unlock()
		completeErr = m.Complete(ctx, l)
		close(release)
		failErr = <-failDone
	}
	if (failErr == nil) == (completeErr == nil) {
		in, _ := m.Inspect(ctx, "j")
		t.Fatalf("Fail = %v, Complete = %v: want exactly one to succeed (job now %v)", failErr, completeErr, in)
	}
	if failErr != nil && !errors.Is(failErr, ErrLeaseLost) || completeErr != nil && !errors.Is(completeErr, ErrLeaseLost) {
		t.Fatalf("loser's error: Fail = %v, Complete = %v, want ErrLeaseLost", failErr, completeErr)
	}
}
