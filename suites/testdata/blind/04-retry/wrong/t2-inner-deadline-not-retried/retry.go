// Package retry: blind tester t2's correct alternative. Design: Ceiling by
// bit arithmetic (no doubling loop), Delay via Uint64N over the inclusive
// window, a lock-free CAS budget, one deadline context for the whole call.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// ErrBudgetExhausted is wrapped by Do's error when the budget had no token.
var ErrBudgetExhausted = errors.New("retry: retry budget exhausted")

// Policy says how Do retries.
type Policy struct {
	MaxAttempts int
	Base        time.Duration
	Cap         time.Duration
	Timeout     time.Duration
	Rand        *rand.Rand
	Budget      *Budget
	Retryable   func(err error) bool
	RetryAfter  func(err error) (time.Duration, bool)
}

// Ceiling returns min(Cap, Base·2ⁿ) without overflow.
func (p Policy) Ceiling(n int) time.Duration {
	if p.Base <= 0 || p.Cap <= 0 {
		return 0
	}
	if n < 0 {
		n = 0
	}
	base := uint64(p.Base)
	// Base·2ⁿ > Cap  <=>  Base > floor(Cap/2ⁿ); a shift of 64 or more gives 0.
	// The leading-zero count is a fast path: Base·2ⁿ needs more than 63 bits.
	if n > bits.LeadingZeros64(base)-1 || base > uint64(p.Cap)>>uint(n) {
		return p.Cap
	}
	return time.Duration(base << uint(n))
}

// Delay returns a uniform random duration in [0, Ceiling(n)].
func (p Policy) Delay(n int) time.Duration {
	c := p.Ceiling(n)
	return time.Duration(p.Rand.Uint64N(uint64(c) + 1))
}

func wrapErr(last error, extra ...error) error {
	errs := append([]error{}, extra...)
	if last != nil {
		errs = append(errs, last)
	}
	switch len(errs) {
	case 1:
		return fmt.Errorf("retry: %w", errs[0])
	case 2:
		return fmt.Errorf("retry: %w: %w", errs[0], errs[1])
	}
	return fmt.Errorf("retry: %w: %w: %w", errs[0], errs[1], errs[2])
}

// Do calls op until it succeeds; see README.
func (p Policy) Do(ctx context.Context, op func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return wrapErr(nil, err)
	}
	start := time.Now()
	maxA := max(p.MaxAttempts, 1)
	retryable := p.Retryable
	if retryable == nil {
		retryable = Retryable
	}
	retryAfter := p.RetryAfter
	if retryAfter == nil {
		retryAfter = RetryAfter
	}
	dl, hasDL := ctx.Deadline()
	if p.Timeout > 0 {
		if t := start.Add(p.Timeout); !hasDL || t.Before(dl) {
			dl, hasDL = t, true
		}
	}
	actx := ctx
	if hasDL {
		var cancel context.CancelFunc
		actx, cancel = context.WithDeadline(ctx, dl)
		defer cancel()
	}
	var last error
	for k := 1; ; k++ {
		if hasDL && !time.Now().Before(dl) {
			return wrapErr(last, context.DeadlineExceeded)
		}
		err := op(actx)
		if err == nil {
			if p.Budget != nil {
				p.Budget.Deposit()
			}
			return nil
		}
		last = err
		if cerr := ctx.Err(); cerr != nil {
			return wrapErr(last, cerr)
		}
		if !retryable(err) || k >= maxA {
			return wrapErr(last)
		}
		wait := p.Delay(k - 1)
		if h, ok := retryAfter(err); ok && h > wait {
			wait = h
		}
		if hasDL && !time.Now().Add(wait).Before(dl) {
			return wrapErr(last, context.DeadlineExceeded)
		}
		if p.Budget != nil && !p.Budget.Withdraw() {
			return wrapErr(last, ErrBudgetExhausted)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return wrapErr(last, ctx.Err())
		case <-t.C:
		}
	}
}

// StatusCoder is implemented by errors carrying an HTTP status code.
type StatusCoder interface {
	StatusCode() int
}

// RetryAfterer is implemented by errors carrying a Retry-After hint.
type RetryAfterer interface {
	RetryAfter() time.Duration
}

// Retryable reports whether another attempt after err can succeed.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {

		return false
	}
	var sc StatusCoder
	if errors.As(err, &sc) {
		c := sc.StatusCode()
		return c == 408 || c == 429 || (c >= 500 && c <= 599)
	}
	return true
}

// RetryAfter returns the positive Retry-After hint carried by err.
func RetryAfter(err error) (time.Duration, bool) {
	var ra RetryAfterer
	if errors.As(err, &ra) {
		if d := ra.RetryAfter(); d > 0 {
			return d, true
		}
	}
	return 0, false
}

// Budget is a lock-free token bucket.
type Budget struct {
	capacity int64
	tokens   atomic.Int64
}

// NewBudget returns a full budget holding capacity tokens.
func NewBudget(capacity int) *Budget {
	b := &Budget{capacity: int64(max(capacity, 0))}
	b.tokens.Store(b.capacity)
	return b
}

// Withdraw takes one token and reports whether there was one.
func (b *Budget) Withdraw() bool {
	for {
		n := b.tokens.Load()
		if n <= 0 {
			return false
		}
		if b.tokens.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// Deposit puts one token back, up to capacity.
func (b *Budget) Deposit() {
	for {
		n := b.tokens.Load()
		if n >= b.capacity {
			return
		}
		if b.tokens.CompareAndSwap(n, n+1) {
			return
		}
	}
}

// Tokens returns the number of tokens left.
func (b *Budget) Tokens() int { return int(b.tokens.Load()) }
