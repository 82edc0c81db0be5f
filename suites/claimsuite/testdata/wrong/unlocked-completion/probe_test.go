package claim

import (
	"context"
	"sync"
	"testing"
)

// Promise (Store doc comment): "A Store must be safe for concurrent use."
// README: "The store is safe for concurrent use by any number of goroutines."
// Readers ask for the key while its work completes. Run with -race: the race
// detector fails this test on an unsynchronised completion.
func TestProbeCompletionIsSynchronised(t *testing.T) {
	for round := 0; round < 50; round++ {
		s := New()
		started := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Do(context.Background(), "task-42", func(context.Context) (string, error) {
				close(started)
				return "sent", nil
			})
		}()
		<-started
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 20; j++ {
					s.Do(context.Background(), "task-42", func(context.Context) (string, error) { return "x", nil })
				}
			}()
		}
		wg.Wait()
	}
}
