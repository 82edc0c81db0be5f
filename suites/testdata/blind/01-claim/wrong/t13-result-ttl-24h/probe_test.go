package claim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestProbeStoredResultDoesNotExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		ctx := context.Background()
		if _, err := s.Do(ctx, "k", func(context.Context) (string, error) { return "sent", nil }); err != nil {
			t.Fatal(err)
		}
		for _, d := range []time.Duration{time.Second, time.Hour, 25 * time.Hour, 400 * 24 * time.Hour} {
			time.Sleep(d)
			runs := 0
			v, err := s.Do(ctx, "k", func(context.Context) (string, error) { runs++; return "again", nil })
			if runs != 0 || v != "sent" || err != nil {
				t.Fatalf("a further %v later: runs %d, %q, %v; want the stored value", d, runs, v, err)
			}
		}
	})
}
