package claim

import (
	"context"
	"testing"
)

func TestProbeKeysCompareExactly(t *testing.T) {
	s := New()
	ctx := context.Background()
	for _, k := range []string{"task-42", "task-42 ", " task-42", "", " "} {
		runs := 0
		v, err := s.Do(ctx, k, func(context.Context) (string, error) { runs++; return "v:" + k, nil })
		if runs != 1 || v != "v:"+k || err != nil {
			t.Errorf("key %q: runs %d, %q, %v; want its own work run", k, runs, v, err)
		}
	}
}
