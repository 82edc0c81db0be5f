package retry

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

type topSource struct{}

func (topSource) Uint64() uint64 { return math.MaxUint64 }

func TestProbeCorrectCeilingDelay(t *testing.T) {
	p := Policy{Base: 3 * time.Second, Cap: math.MaxInt64, Rand: rand.New(topSource{})}
	for _, n := range []int{-5, 0, 1, 40, 61, 62, 63, 64, 1000, math.MaxInt} {
		c := p.Ceiling(n)
		if c < 0 || (n >= 62 && c != math.MaxInt64) || p.Delay(n) != c {
			t.Fatalf("n=%d: ceiling %v delay %v", n, c, p.Delay(n))
		}
	}
	if (Policy{Base: 0, Cap: time.Second}).Ceiling(3) != 0 {
		t.Fatal("zero base")
	}
}

func TestProbeCorrectDo(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		b := NewBudget(1)
		p := Policy{MaxAttempts: 5, Base: time.Second, Cap: 4 * time.Second, Timeout: 10 * time.Second, Rand: rand.New(topSource{}), Budget: b}
		n := 0
		boom := errors.New("x")
		err := p.Do(context.Background(), func(context.Context) error { n++; return boom })
		if n != 2 || !errors.Is(err, ErrBudgetExhausted) || !errors.Is(err, boom) {
			t.Fatal(n, err)
		}
		b.Deposit()
		n = 0
		start := time.Now()
		err = p.Do(context.Background(), func(context.Context) error { n++; return boom })
		// attempt 1 at 0, wait 1s, attempt 2; budget now empty again -> stop.
		if n != 2 || time.Since(start) != time.Second || !errors.Is(err, ErrBudgetExhausted) {
			t.Fatal(n, time.Since(start), err)
		}
		p.Budget = nil
		n = 0
		start = time.Now()
		err = p.Do(context.Background(), func(context.Context) error { n++; return boom })
		// 0, 1s, 3s, 7s; next wait 4s would end at 11s >= 10s deadline.
		if n != 4 || time.Since(start) != 7*time.Second || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(n, time.Since(start), err)
		}
	})
}

func TestProbeCorrectBudgetConcurrent(t *testing.T) {
	b := NewBudget(100)
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if b.Withdraw() {
					mu.Lock()
					got++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if got != 100 || b.Tokens() != 0 {
		t.Fatal(got, b.Tokens())
	}
}
