package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

type maxSrc struct{}

func (maxSrc) Uint64() uint64 { return math.MaxUint64 }

type statusErr struct {
	code int
	ra   time.Duration
}

func (e statusErr) Error() string             { return fmt.Sprintf("status %d", e.code) }
func (e statusErr) StatusCode() int           { return e.code }
func (e statusErr) RetryAfter() time.Duration { return e.ra }

func TestProbeCeilingAndDelay(t *testing.T) {
	p := Policy{Base: time.Second, Cap: time.Hour, Rand: rand.New(maxSrc{})}
	for n, want := range map[int]time.Duration{-5: time.Second, 0: time.Second, 1: 2 * time.Second, 11: 2048 * time.Second, 12: time.Hour, 40: time.Hour, 64: time.Hour, 1000: time.Hour, math.MaxInt: time.Hour} {
		if got := p.Ceiling(n); got != want {
			t.Fatalf("Ceiling(%d)=%v want %v", n, got, want)
		}
		if got := p.Delay(n); got != want {
			t.Fatalf("Delay(%d) at max draw=%v", n, got)
		}
	}
	p = Policy{Base: 1, Cap: math.MaxInt64}
	for n := 0; n < 63; n++ {
		if p.Ceiling(n) != time.Duration(1)<<n {
			t.Fatalf("n=%d %v", n, p.Ceiling(n))
		}
	}
	if p.Ceiling(63) != math.MaxInt64 || p.Ceiling(100) != math.MaxInt64 {
		t.Fatal("cap")
	}
	if (Policy{Base: -1, Cap: 5}).Ceiling(3) != 0 || (Policy{Base: 1, Cap: 0}).Ceiling(3) != 0 {
		t.Fatal("nonpositive")
	}
	p = Policy{Base: 3, Cap: 3, Rand: rand.New(rand.NewPCG(1, 2))}
	var cnt [4]int
	for i := 0; i < 40000; i++ {
		cnt[p.Delay(0)]++
	}
	for _, c := range cnt {
		if c < 9000 || c > 11000 {
			t.Fatalf("uneven %v", cnt)
		}
	}
}

func TestProbeDoSchedule(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		mk := func() Policy {
			return Policy{MaxAttempts: 4, Base: time.Second, Cap: 10 * time.Second, Rand: rand.New(rand.NewPCG(7, 7))}
		}
		ref := mk()
		want := []time.Duration{ref.Delay(0), ref.Delay(1), ref.Delay(2)}
		p := mk()
		var at []time.Duration
		err := p.Do(context.Background(), func(ctx context.Context) error {
			at = append(at, fakeclock.Elapsed())
			return statusErr{code: 503}
		})
		if len(at) != 4 || !errors.As(err, new(statusErr)) {
			t.Fatalf("%v %v", at, err)
		}
		for i := 1; i < 4; i++ {
			if at[i]-at[i-1] != want[i-1] {
				t.Fatalf("gap %d = %v want %v", i, at[i]-at[i-1], want[i-1])
			}
		}
		if p.Rand.Uint64() != ref.Rand.Uint64() {
			t.Fatal("extra draws")
		}
	})
}

func TestProbeDeadlineBudgetCancel(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		b := NewBudget(2)
		p := Policy{MaxAttempts: 5, Base: time.Second, Cap: time.Second, Timeout: 3 * time.Second, Rand: rand.New(maxSrc{}), Budget: b}
		n := 0
		err := p.Do(context.Background(), func(ctx context.Context) error {
			n++
			if d, ok := ctx.Deadline(); !ok || !d.Equal(fakeclock.Epoch.Add(3*time.Second)) {
				t.Errorf("attempt deadline %v", d)
			}
			return errors.New("reset")
		})
		// attempts at 0,1,2; wait at 2 ends at 3 = deadline -> stop, 2 tokens used
		if n != 3 || !errors.Is(err, context.DeadlineExceeded) || b.Tokens() != 0 {
			t.Fatalf("n=%d err=%v tokens=%d", n, err, b.Tokens())
		}
		err = p.Do(context.Background(), func(ctx context.Context) error { return statusErr{code: 500} })
		if !errors.Is(err, ErrBudgetExhausted) {
			t.Fatal(err)
		}
		if p.Do(context.Background(), func(ctx context.Context) error { return nil }) != nil || b.Tokens() != 1 {
			t.Fatal("deposit")
		}
		ctx, cancel := context.WithCancel(context.Background())
		err = p.Do(ctx, func(context.Context) error { cancel(); return statusErr{code: 503} })
		if !errors.Is(err, context.Canceled) || b.Tokens() != 1 {
			t.Fatal(err, b.Tokens())
		}
		for _, c := range []int{400, 401, 404, 422, 600, 499} {
			n = 0
			(Policy{MaxAttempts: 3, Rand: rand.New(maxSrc{})}).Do(context.Background(), func(context.Context) error { n++; return fmt.Errorf("w: %w", statusErr{code: c}) })
			if n != 1 {
				t.Fatalf("%d retried", c)
			}
		}
		n = 0
		start := fakeclock.Elapsed()
		(Policy{MaxAttempts: 2, Base: 1, Cap: 1, Rand: rand.New(maxSrc{})}).Do(context.Background(), func(context.Context) error {
			n++
			return fmt.Errorf("a: %w", fmt.Errorf("b: %w", statusErr{code: 429, ra: 72 * time.Hour}))
		})
		if n != 2 || fakeclock.Elapsed()-start != 72*time.Hour {
			t.Fatal("retry-after", n, fakeclock.Elapsed()-start)
		}
	})
}
