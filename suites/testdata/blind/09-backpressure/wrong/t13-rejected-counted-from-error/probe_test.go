package backpressure

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

type fullStoreClaimer struct{}

func (fullStoreClaimer) Claim(ctx context.Context, tenant, key string) error {
	return fmt.Errorf("claim store: %w", ErrQueueFull)
}

func TestProbeFailedClaimNotCountedRejected(t *testing.T) {
	q := New(Options{Capacity: 4, Claimer: fullStoreClaimer{}})
	err := q.Submit(context.Background(), "a", "k", Task{})
	if err == nil {
		t.Fatal("failed claim returned nil")
	}
	if !errors.Is(err, ErrQueueFull) {
		t.Fatalf("claimer's error not wrapped: %v", err)
	}
	if s := q.Stats(); s.Rejected != 0 || s.Depth != 0 {
		t.Fatalf("stats after a failed claim: %v, want rejected 0 depth 0", s)
	}
}
