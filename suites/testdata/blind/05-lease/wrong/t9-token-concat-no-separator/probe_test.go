package lease

import (
	"context"
	"testing"
)

// Every delivery gets a token different from every token issued before,
// for this task or any other (R4).
func TestProbeTokensUniqueAcrossTasks(t *testing.T) {
	ctx := context.Background()
	q, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, Task{ID: "a1"}); err != nil {
		t.Fatal(err)
	}
	la1, err := q.Lease(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, Task{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	seen := map[LeaseToken]string{la1.Token: "a1 attempt 1"}
	for i := 1; i <= 12; i++ {
		l, err := q.Lease(ctx, "w2")
		if err != nil || l.Task.ID != "a" {
			t.Fatalf("lease %d = %v, %v", i, l, err)
		}
		if prev, dup := seen[l.Token]; dup {
			t.Fatalf("a attempt %d got token %q, already issued to %s", l.Attempt, l.Token, prev)
		}
		seen[l.Token] = "a"
		if err := q.Nack(ctx, l.Token, 0); err != nil {
			t.Fatal(err)
		}
	}
}
