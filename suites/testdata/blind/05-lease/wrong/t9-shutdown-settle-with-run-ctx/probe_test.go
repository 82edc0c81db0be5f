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

// When Run's ctx ends, the cancelled handler's task is settled as R15 says
// with a context that is not done (R16): the queue refuses a done one.
func TestProbeShutdownReleasesUnfinishedWork(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		f := &fakeQ{length: 40 * time.Second, tasks: []Lease{{Task: Task{ID: "a"}, Token: "T1", Attempt: 1}}}
		w := NewWorker(f, WorkerOptions{Name: "w1", PollInterval: time.Hour},
			func(ctx context.Context, l Lease) error {
				<-ctx.Done()
				return ctx.Err()
			})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		fakeclock.Advance(5 * time.Second)
		cancel()
		err := <-done
		_, _, acks, nacks := f.snapshot()
		if !errors.Is(err, context.Canceled) || len(acks) != 0 || len(nacks) != 1 || nacks[0].token != "T1" {
			t.Fatalf("Run = %v, acks %v, nacks %v; want context.Canceled and the unfinished task released: one Nack(T1) accepted", err, acks, nacks)
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
