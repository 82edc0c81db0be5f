package lease

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is

// Renewed work may take far longer than the visibility timeout (R13): the
// handler's ctx is cancelled only when the lease is lost or ends without a
// renewal (R14), and the finished task is acknowledged (R15).
func TestProbeRenewedWorkOutlivesFirstExpiry(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		f := &fakeQ{length: 40 * time.Second, tasks: []Lease{{Task: Task{ID: "a"}, Token: "T1", Attempt: 1}}}
		var cancelledAt time.Duration = -1
		w := NewWorker(f, WorkerOptions{Name: "w1", PollInterval: time.Hour},
			func(ctx context.Context, l Lease) error {
				select {
				case <-time.After(100 * time.Second):
					return nil
				case <-ctx.Done():
					cancelledAt = fakeclock.Elapsed()
					return ctx.Err()
				}
			})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		fakeclock.Advance(101 * time.Second)
		_, extends, acks, _ := f.snapshot()
		cancel()
		<-done
		if cancelledAt >= 0 || len(acks) != 1 {
			t.Fatalf("handler ctx cancelled at %v (-1: never), extends %v, acks %v; want never cancelled and one Ack after 100 s of renewed work", cancelledAt, extends, acks)
		}
	})
}

// fakeQ is the probe's own LeaseQueue: it hands out the leases in tasks,
// each lasting length from the Lease call, and records every call.
type fakeQ struct {
	mu          sync.Mutex
	length      time.Duration
	tasks       []Lease
	leaseErr    error // returned by Lease once tasks is empty, instead of ErrNoTask
	leaseCalls  []time.Duration
	extendCalls []fakeCall
	acks        []fakeCall
	nacks       []fakeCall
	extendErr   error // returned by every Extend when set
	extendStall bool  // Extend blocks until its ctx is done
}

type fakeCall struct {
	at    time.Duration // fakeclock.Elapsed()
	token LeaseToken
	d     time.Duration
}

func (f *fakeQ) Lease(ctx context.Context, holder string) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leaseCalls = append(f.leaseCalls, fakeclock.Elapsed())
	if len(f.tasks) == 0 {
		if f.leaseErr != nil {
			return Lease{}, f.leaseErr
		}
		return Lease{}, ErrNoTask
	}
	l := f.tasks[0]
	f.tasks = f.tasks[1:]
	l.Holder = holder
	l.Expires = time.Now().Add(f.length)
	return l, nil
}

func (f *fakeQ) Extend(ctx context.Context, token LeaseToken, d time.Duration) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, err
	}
	f.mu.Lock()
	f.extendCalls = append(f.extendCalls, fakeCall{fakeclock.Elapsed(), token, d})
	stall, xerr := f.extendStall, f.extendErr
	f.mu.Unlock()
	if stall {
		<-ctx.Done()
		return Lease{}, ctx.Err()
	}
	if xerr != nil {
		return Lease{}, xerr
	}
	return Lease{Token: token, Expires: time.Now().Add(d)}, nil
}

func (f *fakeQ) Ack(ctx context.Context, token LeaseToken) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acks = append(f.acks, fakeCall{at: fakeclock.Elapsed(), token: token})
	return nil
}

func (f *fakeQ) Nack(ctx context.Context, token LeaseToken, delay time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nacks = append(f.nacks, fakeCall{at: fakeclock.Elapsed(), token: token, d: delay})
	return nil
}

func (f *fakeQ) snapshot() (leases []time.Duration, extends, acks, nacks []fakeCall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.leaseCalls...), append([]fakeCall(nil), f.extendCalls...),
		append([]fakeCall(nil), f.acks...), append([]fakeCall(nil), f.nacks...)
}
