// Package workpool runs a fixed number of jobs on a bounded number of
// goroutines. The grader's verify and labctl's class grading share it.
package workpool

import (
	"context"
	"sync"
)

// Each calls f(i) for every i in [0, count), at most n at a time (n <= 0
// means one at a time), and returns when every call has returned. Once ctx is
// done, jobs not yet started are skipped; Each then returns ctx.Err().
func Each(ctx context.Context, n, count int, f func(i int)) error {
	if n <= 0 {
		n = 1
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(n, count) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				f(i)
			}
		}()
	}
	var err error
feed:
	for i := range count {
		select {
		case jobs <- i:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return err
}
