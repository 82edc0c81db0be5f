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
	if p.Base <= 0 || p.Cap <= 0 {
		return 0
	}
	if n < 0 {
		n = 0
	}
	c := p.Base
	for i := 0; i < n; i++ {
		if c >= p.Cap {
			return p.Cap
		}
		if c > math.MaxInt64/2 {
			return p.Cap
		}
		c *= 2
	}
	return min(c, p.Cap)
}

// Delay returns a uniformly random duration in [0, Ceiling(n)].
func (p Policy) Delay(n int) time.Duration {
	c := p.Ceiling(n)
	if c <= 0 {
		return 0
	}
	return time.Duration(p.Rand.Uint64N(uint64(c) + 1))
}

// Do calls op until it succeeds or a rule stops it.
func (p Policy) Do(ctx context.Context, op func(ctx context.Context) error) error {
	start := time.Now()
	deadline, hasDeadline := ctx.Deadline()
	if p.Timeout > 0 {
		td := start.Add(p.Timeout)
		if !hasDeadline || td.Before(deadline) {
			deadline, hasDeadline = td, true
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("retry: no attempt made: %w", err)
	}
	actx := ctx
	if hasDeadline {
		var cancel context.CancelFunc
		actx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	maxAttempts := max(p.MaxAttempts, 1)
	retryable := p.Retryable
	if retryable == nil {
		retryable = Retryable
	}
	retryAfter := p.RetryAfter
	if retryAfter == nil {
		retryAfter = RetryAfter
	}

	for k := 1; ; k++ {
		err := op(actx)
		if err == nil {
			if p.Budget != nil {
				p.Budget.Deposit()
			}
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("retry: attempt %d: %w (caller gave up: %w)", k, err, cerr)
		}
		if !retryable(err) {
			return fmt.Errorf("retry: attempt %d, not retryable: %w", k, err)
		}
		if k >= maxAttempts {
			return fmt.Errorf("retry: %d attempts made, last: %w", k, err)
		}
		wait := p.Delay(k - 1)
		if hint, ok := retryAfter(err); ok && hint > wait {
			wait = hint
		}
		if hasDeadline && wait >= time.Until(deadline) {
			return fmt.Errorf("retry: attempt %d: %w (next wait %v would reach the deadline: %w)", k, err, wait, context.DeadlineExceeded)
		}
		if p.Budget != nil && !p.Budget.Withdraw() {
			return fmt.Errorf("retry: attempt %d: %w (%w)", k, err, ErrBudgetExhausted)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("retry: attempt %d: %w (caller gave up while waiting: %w)", k, err, ctx.Err())
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
	if ra, ok := err.(RetryAfterer); ok {
		if d := ra.RetryAfter(); d > 0 {
			return d, true
		}
	}
	return 0, false
}

// Budget is a retry budget: a token bucket shared by every caller of one
// dependency. It is safe for concurrent use.
type Budget struct {
	mu       sync.Mutex
	tokens   int
	capacity int
}

// NewBudget returns a full budget holding capacity tokens (0 if negative).
func NewBudget(capacity int) *Budget {
	capacity = max(capacity, 0)
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

// Deposit puts one token back, unless the budget is already full.
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
