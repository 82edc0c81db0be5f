package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

// The same ID with other contents is a conflict, even when the fields of
// the two jobs, run together, spell the same bytes.
func TestProbeConflictWhenFieldsShiftTheirBoundaries(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	mr := miniredis.RunT(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	r, err := NewRedis(rdb, "ns", Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	first := Job{ID: "j", Account: "acme", Steps: []Step{{DocumentID: "1", Recipient: "a@x.io"}}}
	other := Job{ID: "j", Account: "acm", Steps: []Step{{DocumentID: "e1", Recipient: "a@x.io"}}}
	if ok, err := r.Submit(ctx, first); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, err := r.Submit(ctx, other); !errors.Is(err, ErrConflict) {
		t.Fatalf("Submit(same ID, account %q document %q) after (account %q document %q) = %v, %v; want ErrConflict",
			other.Account, other.Steps[0].DocumentID, first.Account, first.Steps[0].DocumentID, ok, err)
	}
}
