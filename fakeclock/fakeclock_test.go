package fakeclock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

func TestClockStartsAtEpochAndMovesOnlyWithAdvance(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		if got := fakeclock.Now(); !got.Equal(fakeclock.Epoch) {
			t.Fatalf("Now() = %v, want %v", got, fakeclock.Epoch)
		}
		fakeclock.Wait()
		if got := fakeclock.Elapsed(); got != 0 {
			t.Fatalf("Elapsed() after Wait = %v, want 0 (Wait must not move time)", got)
		}
		fakeclock.Advance(90 * time.Second)
		if got := fakeclock.Elapsed(); got != 90*time.Second {
			t.Fatalf("Elapsed() after Advance(90s) = %v, want 90s", got)
		}
	})
}

func TestTimerFiresExactlyAtItsDeadline(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		fired := make(chan time.Duration, 1)
		time.AfterFunc(5*time.Second, func() { fired <- fakeclock.Elapsed() })

		fakeclock.Advance(5*time.Second - time.Nanosecond)
		select {
		case at := <-fired:
			t.Fatalf("timer fired at %v, before its 5s deadline", at)
		default:
		}
		fakeclock.Advance(time.Nanosecond)
		select {
		case at := <-fired:
			if at != 5*time.Second {
				t.Fatalf("timer fired at %v, want 5s", at)
			}
		default:
			t.Fatal("timer did not fire at its 5s deadline")
		}
	})
}

func TestTickerTicksOncePerPeriod(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		tk := time.NewTicker(time.Minute)
		defer tk.Stop()
		ticks := 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range tk.C {
				ticks++
				if ticks == 3 {
					return
				}
			}
		}()
		fakeclock.Advance(2*time.Minute + 30*time.Second)
		if ticks != 2 {
			t.Fatalf("ticks after 2m30s = %d, want 2", ticks)
		}
		fakeclock.Advance(30 * time.Second)
		<-done
		if ticks != 3 {
			t.Fatalf("ticks after 3m = %d, want 3", ticks)
		}
	})
}

func TestContextDeadlineFollowsVirtualTime(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		fakeclock.Advance(29 * time.Second)
		if err := ctx.Err(); err != nil {
			t.Fatalf("ctx.Err() after 29s = %v, want nil", err)
		}
		fakeclock.Advance(time.Second)
		if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ctx.Err() after 30s = %v, want %v", err, context.DeadlineExceeded)
		}
	})
}

func TestHoursOfVirtualTimeTakeMilliseconds(t *testing.T) {
	start := time.Now() // real time: outside any bubble
	fakeclock.Run(t, func(t *testing.T) {
		// A worker that wakes up every second for six hours.
		done := make(chan int)
		go func() {
			n := 0
			for range 6 * 60 * 60 {
				time.Sleep(time.Second)
				n++
			}
			done <- n
		}()
		if n := <-done; n != 21600 {
			t.Fatalf("wake-ups = %d, want 21600", n)
		}
		if got := fakeclock.Elapsed(); got != 6*time.Hour {
			t.Fatalf("virtual time elapsed = %v, want 6h", got)
		}
	})
	// Not a timing assertion (those live in make bench): a report of how
	// cheap virtual time is, visible with go test -v.
	t.Logf("6h of virtual time took %v of real time", time.Since(start))
}
