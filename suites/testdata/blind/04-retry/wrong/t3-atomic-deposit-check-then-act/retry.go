// Package retry calls an operation again when it fails for a reason that may
// pass: bounded attempts, capped exponential backoff with full jitter, one
// deadline for the whole call, and a shared retry budget.
//
// Style: the deadline is carried by a derived context (context.WithTimeout
// picks the earlier of Timeout and ctx's deadline by itself), attempts are
// made by a recursive helper, the wait is a time.AfterFunc closing a channel,
// the ceiling is computed in float64 (exact for powers of two), and the
// Budget is a lock-free compare-and-swap counter.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// ErrBudgetExhausted is wrapped by Do's error when a retry was due but the
// policy's Budget had no token left.
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

// Ceiling returns min(Cap, Base·2ⁿ). Multiplying by a power of two is exact
// in float64 (or +Inf), so the comparison with Cap is exact too.
func (p Policy) Ceiling(n int) time.Duration {
	if n < 0 {
		n = 0
	}
	if p.Base <= 0 || p.Cap <= 0 {
		return 0
	}
	if f := math.Ldexp(float64(p.Base), n); f < float64(p.Cap) {
		// f < Cap, so Base<<n fits; the integer check only guards float
		// rounding when Cap is within 2^-53 of MaxInt64.
		if d := p.Base << uint(n); d > 0 && d <= p.Cap {
			return d
		}
	}
	return p.Cap
}

// Delay returns a uniformly random duration in [0, Ceiling(n)].
func (p Policy) Delay(n int) time.Duration {
	c := p.Ceiling(n)
	if c <= 0 {
		return 0
	}
	if c == math.MaxInt64 {
		return time.Duration(p.Rand.Uint64N(math.MaxInt64 + 1))
	}
	return time.Duration(p.Rand.Int64N(int64(c) + 1))
}

type run struct {
	p          Policy
	caller     context.Context // the caller's context: its cancellation is reported as such
	call       context.Context // ends at the deadline
	op         func(ctx context.Context) error
	retryable  func(error) bool
	retryAfter func(error) (time.Duration, bool)
	max        int
}

func giveUp(last, why error) error {
	if why == nil {
		return fmt.Errorf("retry: giving up: %w", last)
	}
	if last == nil {
		return fmt.Errorf("retry: giving up: %w", why)
	}
	return fmt.Errorf("retry: giving up: %w (last attempt: %w)", why, last)
}

// attempt makes attempt number k (1-based) and, if needed, the ones after it.
func (r *run) attempt(k int, last error) error {
	if dl, ok := r.call.Deadline(); ok && !time.Now().Before(dl) {
		return giveUp(last, context.DeadlineExceeded)
	}
	err := r.op(r.call)
	if err == nil {
		if r.p.Budget != nil {
			r.p.Budget.Deposit()
		}
		return nil
	}
	if cerr := r.caller.Err(); cerr != nil {
		return giveUp(err, cerr)
	}
	if !r.retryable(err) || k >= r.max {
		return giveUp(err, nil)
	}
	wait := r.p.Delay(k - 1)
	if hint, ok := r.retryAfter(err); ok && hint > wait {
		wait = hint
	}
	if dl, ok := r.call.Deadline(); ok && !time.Now().Add(wait).Before(dl) {
		return giveUp(err, context.DeadlineExceeded)
	}
	if r.p.Budget != nil && !r.p.Budget.Withdraw() {
		return giveUp(err, ErrBudgetExhausted)
	}
	woke := make(chan struct{})
	t := time.AfterFunc(wait, func() { close(woke) })
	select {
	case <-woke:
	case <-r.caller.Done():
		t.Stop()
		return giveUp(err, r.caller.Err())
	}
	return r.attempt(k+1, err)
}

// Do calls op until it succeeds.
func (p Policy) Do(ctx context.Context, op func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return giveUp(nil, err)
	}
	call, cancel := ctx, context.CancelFunc(func() {})
	if p.Timeout > 0 {
		call, cancel = context.WithTimeout(ctx, p.Timeout)
	}
	defer cancel()
	r := &run{p: p, caller: ctx, call: call, op: op, retryable: p.Retryable, retryAfter: p.RetryAfter, max: max(1, p.MaxAttempts)}
	if r.retryable == nil {
		r.retryable = Retryable
	}
	if r.retryAfter == nil {
		r.retryAfter = RetryAfter
	}
	return r.attempt(1, nil)
}

// StatusCoder is implemented by errors that carry an HTTP status code.
type StatusCoder interface {
	StatusCode() int
}

// RetryAfterer is implemented by errors that carry a Retry-After hint.
type RetryAfterer interface {
	RetryAfter() time.Duration
}

// Retryable reports whether another attempt after err can succeed.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var sc StatusCoder
	if !errors.As(err, &sc) {
		return true // no answer at all
	}
	code := sc.StatusCode()
	return code == 408 || code == 429 || code/100 == 5
}

// RetryAfter returns the positive Retry-After hint carried by err.
func RetryAfter(err error) (time.Duration, bool) {
	var ra RetryAfterer
	if !errors.As(err, &ra) {
		return 0, false
	}
	if d := ra.RetryAfter(); d > 0 {
		return d, true
	}
	return 0, false
}

// Budget is a retry budget shared by every caller of one dependency: a
// lock-free token counter.
type Budget struct {
	tokens   atomic.Int64
	capacity int64
}

// NewBudget returns a full budget holding capacity tokens.
func NewBudget(capacity int) *Budget {
	b := &Budget{capacity: int64(max(capacity, 0))}
	b.tokens.Store(b.capacity)
	return b
}

// Withdraw takes one token for a retry and reports whether there was one.
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

// Deposit puts one token back, unless the budget is full.
func (b *Budget) Deposit() {
	if b.tokens.Load() < b.capacity {
		b.tokens.Add(1)
	}
}

// Tokens returns the number of tokens left.
func (b *Budget) Tokens() int { return int(b.tokens.Load()) }
