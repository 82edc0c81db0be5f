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

// When Extend says the lease is lost, the worker cancels the handler,
// waits for it to return, and only then goes on with the next task: a slot
// is free again once the handler of a lost lease has returned (R11, R14).
func TestProbeLostLeaseSlotFreedAfterHandlerReturns(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		f := &fakeQ{length: 40 * time.Second, extendErr: ErrLeaseLost, tasks: []Lease{
			{Task: Task{ID: "a"}, Token: "T1", Attempt: 1},
			{Task: Task{ID: "b"}, Token: "T2", Attempt: 1},
		}}
		rel := make(chan struct{})
		w := NewWorker(f, WorkerOptions{Name: "w1", Capacity: 1, PollInterval: time.Hour},
			func(ctx context.Context, l Lease) error {
				if l.Token == "T1" {
					<-ctx.Done()
					<-rel // slow to stop
					return ctx.Err()
				}
				return nil
			})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		fakeclock.Advance(25 * time.Second) // renewal at t=20s says lost
		leasesBefore, extends, _, _ := f.snapshot()
		close(rel)
		fakeclock.Advance(time.Second)
		leasesAfter, _, acks, nacks := f.snapshot()
		cancel()
		<-done
		if len(extends) != 1 || len(leasesBefore) != 1 {
			t.Fatalf("before the lost handler returned: lease calls at %v, extends %v; want exactly one Lease (capacity 1, the cancelled handler still running)", leasesBefore, extends)
		}
		if len(leasesAfter) < 2 || len(acks) != 1 || acks[0].token != "T2" || len(nacks) != 0 {
			t.Fatalf("after: lease calls %v, acks %v, nacks %v; want the next task leased and acked, T1 neither acked nor nacked", leasesAfter, acks, nacks)
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
