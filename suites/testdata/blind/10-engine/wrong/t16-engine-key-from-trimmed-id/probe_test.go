package engine

import (
	"context"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/provider"
)

// Jobs "x" and "x " (a trailing space) are two jobs with the same
// documents: each gets its own keys, so each document goes out twice, once
// per job.
func TestProbeIDsThatDifferInSpacesHaveTheirOwnKeys(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := NewMemory(Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	p := provider.New(provider.Options{})
	e := NewEngine(m, p)
	steps := []Step{{DocumentID: "contract", Recipient: "ann@example.com"}}
	for _, id := range []string{"x", "x "} {
		if _, err := m.Submit(ctx, Job{ID: id, Account: "acc", Steps: steps}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		if err := e.Work(ctx, "w"); err != nil {
			t.Fatalf("Work %d: %v", i+1, err)
		}
	}
	for _, id := range []string{"x", "x "} {
		if in, _ := m.Inspect(ctx, id); in.State != "done" {
			t.Fatalf("job %q: %v, want done", id, in)
		}
	}
	if got := p.Received("ann@example.com"); got != 2 {
		t.Fatalf("ann received %d signing requests, want 2 (one per job); keys: %v", got, p.Deliveries("ann@example.com"))
	}
}
