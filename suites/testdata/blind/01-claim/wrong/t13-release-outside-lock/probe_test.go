package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestProbeConcurrentFailuresOnOtherKeys(t *testing.T) {
	s := New()
	ctx := context.Background()
	boom := errors.New("boom")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				key := fmt.Sprintf("g%d-%d", g, i)
				if _, err := s.Do(ctx, key, func(context.Context) (string, error) { return "", boom }); err != boom {
					t.Errorf("%s: %v", key, err)
				}
			}
		}(g)
	}
	wg.Wait()
}
