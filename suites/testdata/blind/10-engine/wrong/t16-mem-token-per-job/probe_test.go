package engine

import (
	"context"
	"testing"
	"time"
)

// Tokens grow across jobs: the lease of a second job carries a token greater
// than the first job's.
func TestProbeTokensGrowAcrossJobs(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := NewMemory(Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := m.Submit(ctx, Job{ID: id, Account: "acc", Steps: []Step{{DocumentID: "d", Recipient: "a@x.io"}}}); err != nil {
			t.Fatal(err)
		}
	}
	l1, err := m.Lease(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	l2, err := m.Lease(ctx, "w2")
	if err != nil {
		t.Fatal(err)
	}
	if l2.Token <= l1.Token {
		t.Fatalf("second lease %v has token %d, not greater than the first lease's %d (%v)", l2, l2.Token, l1.Token, l1)
	}
}
