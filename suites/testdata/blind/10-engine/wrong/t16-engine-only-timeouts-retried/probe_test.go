package engine

import (
	"context"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/provider"
)

// The provider fails before committing (ErrUnavailable, retryable): Work
// fails the job for a retry, not for good, and the retry sends it.
func TestProbeUnavailableIsRetried(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := NewMemory(Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	p := provider.New(provider.Options{})
	p.Script(provider.FailBeforeCommit())
	e := NewEngine(m, p)
	if _, err := m.Submit(ctx, Job{ID: "j", Account: "acc", Steps: []Step{{DocumentID: "d", Recipient: "ann@example.com"}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Work(ctx, "w"); err != nil {
		t.Fatalf("Work = %v, want nil", err)
	}
	in, err := m.Inspect(ctx, "j")
	if err != nil || in.State != "queued" || in.Reason != "" {
		t.Fatalf("after ErrUnavailable: %v, %v; want queued for a retry", in, err)
	}
	now = in.Until
	if err := e.Work(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if in, _ := m.Inspect(ctx, "j"); in.State != "done" || p.Received("ann@example.com") != 1 {
		t.Fatalf("after the retry: %v, received %d; want done, 1", in, p.Received("ann@example.com"))
	}
}
