package engine

import (
	"context"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/provider"
)

// A lost reply ends in the provider's own response timeout (ErrTimeout
// wrapping context.DeadlineExceeded) while Work's context is live: Work
// fails the job for a retry and returns nil; the retry sends one document.
func TestProbeLostReplyIsNotTheCallersDeadline(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		now := t0
		m, err := NewMemory(Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		p := provider.New(provider.Options{ResponseTimeout: time.Second})
		p.Script(provider.LoseResponse())
		e := NewEngine(m, p)
		if _, err := m.Submit(ctx, Job{ID: "j", Account: "acc", Steps: []Step{{DocumentID: "d", Recipient: "ann@example.com"}}}); err != nil {
			t.Fatal(err)
		}
		if err := e.Work(ctx, "w"); err != nil {
			t.Fatalf("Work with a lost reply = %v, want nil (the job failed for a retry)", err)
		}
		in, err := m.Inspect(ctx, "j")
		if err != nil || in.State != "queued" || in.LastError == "" {
			t.Fatalf("after a lost reply: %v, %v; want queued with the cause as last error", in, err)
		}
		now = in.Until
		if err := e.Work(ctx, "w"); err != nil {
			t.Fatalf("retry: %v", err)
		}
		if in, _ := m.Inspect(ctx, "j"); in.State != "done" || p.Received("ann@example.com") != 1 {
			t.Fatalf("after the retry: %v, received %d; want done, 1", in, p.Received("ann@example.com"))
		}
	})
}
