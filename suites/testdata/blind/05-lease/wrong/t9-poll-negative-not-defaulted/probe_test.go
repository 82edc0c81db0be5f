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

// countQ stops a runaway worker: past 20 Lease calls it cancels the run.
type countQ struct {
	*fakeQ
	cancel context.CancelFunc
}

func (c countQ) Lease(ctx context.Context, holder string) (Lease, error) {
	l, err := c.fakeQ.Lease(ctx, holder)
	c.fakeQ.mu.Lock()
	n := len(c.fakeQ.leaseCalls)
	c.fakeQ.mu.Unlock()
	if n > 20 {
		c.cancel()
	}
	return l, err
}

// With PollInterval zero or less the worker waits one second after
// ErrNoTask before asking again (R12).
func TestProbeNegativePollIntervalMeansOneSecond(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		f := &fakeQ{length: time.Minute}
		ctx, cancel := context.WithCancel(context.Background())
		w := NewWorker(countQ{f, cancel}, WorkerOptions{Name: "w1", PollInterval: -time.Second},
			func(ctx context.Context, l Lease) error { return nil })
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		fakeclock.Advance(3500 * time.Millisecond)
		cancel()
		<-done
		leases, _, _, _ := f.snapshot()
		want := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}
		if len(leases) != len(want) {
			t.Fatalf("Lease calls at %v; want one a second: %v", leases, want)
		}
		for i := range want {
			if leases[i] != want[i] {
				t.Fatalf("Lease calls at %v; want %v", leases, want)
			}
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
