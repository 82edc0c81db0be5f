// Package retry calls an operation again when it fails for a reason that may
// pass: a bounded number of attempts, exponential backoff with full jitter
// and a cap, one deadline for the whole call, and a retry budget shared by
// every caller of a dependency.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
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

// Ceiling returns min(Cap, Base·2ⁿ) without overflow.
func (p Policy) Ceiling(n int) time.Duration {
	if n < 0 {
		n = 0
	}
	if p.Base <= 0 || p.Cap <= 0 {
		return 0
	}
	if p.Base >= p.Cap {
		return p.Cap
	}
	d := p.Base
	for i := 0; i < n; i++ {
		if d > p.Cap-d { // 2d > Cap
			return p.Cap
		}
		d *= 2
	}
	return d
}

// Delay returns a uniformly random duration in [0, Ceiling(n)].
func (p Policy) Delay(n int) time.Duration {
	c := p.Ceiling(n)
	if c <= 0 {
		return 0
	}
	if c == math.MaxInt64 {
		return time.Duration(p.Rand.Uint64N(uint64(c) + 1))
	}
	return time.Duration(p.Rand.Int64N(int64(c) + 1))
}

// Do calls op until it succeeds.
func (p Policy) Do(ctx context.Context, op func(ctx context.Context) error) error {
	start := time.Now()
	maxAttempts := p.MaxAttempts
	if maxAttempts < 1 {
		maxAttempts = 1
	}
	retryable := p.Retryable
	if retryable == nil {
		retryable = Retryable
	}
	retryAfter := p.RetryAfter
	if retryAfter == nil {
		retryAfter = RetryAfter
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("retry: no attempt made: %w", err)
	}

	var deadline time.Time
	hasDeadline := false
	if p.Timeout > 0 {
		deadline, hasDeadline = start.Add(p.Timeout), true
	}
	if d, ok := ctx.Deadline(); ok && (!hasDeadline || d.Before(deadline)) {
		deadline, hasDeadline = d, true
	}
	actx := ctx
	if hasDeadline {
		var cancel context.CancelFunc
		actx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}

	var last error
	for attempt := 1; ; attempt++ {
		if hasDeadline && !time.Now().Before(deadline) {
			if last == nil {
				return fmt.Errorf("retry: deadline passed before attempt %d: %w", attempt, context.DeadlineExceeded)
			}
			return fmt.Errorf("retry: deadline passed before attempt %d: %w (%w)", attempt, context.DeadlineExceeded, last)
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
			return fmt.Errorf("retry: attempt %d: %w (%w)", attempt, err, cerr)
		}
		if !retryable(err) {
			return fmt.Errorf("retry: attempt %d, not retryable: %w", attempt, err)
		}
		if attempt >= maxAttempts {
			return fmt.Errorf("retry: gave up after %d attempts: %w", attempt, err)
		}
		wait := time.Duration(0)
		if c := p.Ceiling(attempt - 1); c > 0 {
			wait = time.Duration(rand.Int64N(int64(c) + 1))
		}
		if h, ok := retryAfter(err); ok && h > wait {
			wait = h
		}
		if hasDeadline && !time.Now().Add(wait).Before(deadline) {
			return fmt.Errorf("retry: next wait would reach the deadline: %w (%w)", err, context.DeadlineExceeded)
		}
		if p.Budget != nil && !p.Budget.Withdraw() {
			return fmt.Errorf("retry: attempt %d: %w (%w)", attempt, err, ErrBudgetExhausted)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("retry: cancelled during wait: %w (%w)", err, ctx.Err())
		case <-t.C:
		}
	}
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

// Budget is a retry budget shared by every caller of one dependency.
type Budget struct {
	mu       sync.Mutex
	tokens   int
	capacity int
}

// NewBudget returns a full budget holding capacity tokens.
func NewBudget(capacity int) *Budget {
	if capacity < 0 {
		capacity = 0
	}
	return &Budget{tokens: capacity, capacity: capacity}
}

// Withdraw takes one token for a retry and reports whether there was one.
func (b *Budget) Withdraw() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens <= 0 {
		return false
	}
	b.tokens--
	return true
}

// Deposit puts one token back, unless the budget is full.
func (b *Budget) Deposit() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens < b.capacity {
		b.tokens++
	}
}

// Tokens returns the number of tokens left.
func (b *Budget) Tokens() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens
}
