package lease

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestProbeCorrectQueue(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		q, _ := New(Options{VisibilityTimeout: time.Minute})
		for i := 1; i <= 3; i++ {
			q.Enqueue(ctx, Task{ID: fmt.Sprint("t", i)})
		}
		l1, _ := q.Lease(ctx, "w1")
		if l1.Task.ID != "t1" || l1.Attempt != 1 || l1.Expires != time.Now().Add(time.Minute) {
			t.Fatal(l1)
		}
		time.Sleep(20 * time.Second)
		l1b, err := q.Extend(ctx, l1.Token, 30*time.Second)
		if err != nil || l1b.Expires != time.Now().Add(30*time.Second) {
			t.Fatal(l1b, err)
		}
		if err := q.Nack(ctx, l1.Token, 0); err != nil {
			t.Fatal(err)
		}
		if err := q.Ack(ctx, l1.Token); !errors.Is(err, ErrLeaseLost) {
			t.Fatal(err)
		}
		l2, _ := q.Lease(ctx, "w2")
		if l2.Task.ID != "t1" || l2.Attempt != 2 || l2.Token == l1.Token {
			t.Fatal(l2)
		}
		time.Sleep(time.Minute)
		if _, err := q.Extend(ctx, l2.Token, time.Second); !errors.Is(err, ErrLeaseLost) {
			t.Fatal(err)
		}
	})
}

func TestProbeCorrectWorker(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		q, _ := New(Options{VisibilityTimeout: 45 * time.Second})
		for i := 1; i <= 4; i++ {
			q.Enqueue(ctx, Task{ID: fmt.Sprint("t", i)})
		}
		var done atomic.Int32
		w := NewWorker(q, WorkerOptions{Name: "w", Capacity: 2}, func(ctx context.Context, l Lease) error {
			time.Sleep(time.Hour)
			done.Add(1)
			return nil
		})
		errc := make(chan error, 1)
		go func() { errc <- w.Run(ctx) }()
		time.Sleep(3 * time.Hour)
		cancel()
		err := <-errc
		if !errors.Is(err, context.Canceled) || done.Load() != 4 {
			t.Fatal(err, done.Load())
		}
		if _, err := q.Lease(context.Background(), "x"); !errors.Is(err, ErrNoTask) {
			t.Fatal(err)
		}
	})
}
