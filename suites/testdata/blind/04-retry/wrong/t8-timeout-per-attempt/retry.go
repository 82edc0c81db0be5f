// Package retry calls an operation again when it fails for a reason that may
// pass: a bounded number of attempts, exponential backoff with full jitter
// and a cap, one deadline for the whole call, and a retry budget shared by
// every caller of a dependency.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// ErrBudgetExhausted is wrapped by Do's error when a retry was due but the
// policy's Budget had no token left.
var ErrBudgetExhausted = errors.New("retry: retry budget exhausted")

// Policy says how Do retries. The zero value makes one attempt and never
// retries.
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

// Ceiling returns min(Cap, Base·2ⁿ), without overflow, never negative.
func (p Policy) Ceiling(n int) time.Duration {
	if p.Base <= 0 || p.Cap <= 0 {
		return 0
	}
	if n < 0 {
		n = 0
	}
	if n >= 63 {
		return p.Cap
	}
	// Base·2ⁿ > Cap  <=>  Base > floor(Cap / 2ⁿ), for integers.
	if p.Base > p.Cap>>uint(n) {
		return p.Cap
	}
	return p.Base << uint(n)
}

// Delay returns a uniformly random duration in [0, Ceiling(n)].
func (p Policy) Delay(n int) time.Duration {
	c := p.Ceiling(n)
	if c <= 0 {
		return 0
	}
	return time.Duration(p.Rand.Uint64N(uint64(c) + 1))
}

// Do calls op until it succeeds or one of the stopping rules applies.
func (p Policy) Do(ctx context.Context, op func(ctx context.Context) error) error {
	start := time.Now()
	deadline, hasDeadline := ctx.Deadline()
	if p.Timeout > 0 {
		if td := start.Add(p.Timeout); !hasDeadline || td.Before(deadline) {
			deadline, hasDeadline = td, true
		}
	}
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

	for k := 1; ; k++ {
		if hasDeadline && !time.Now().Before(deadline) {
			// Only reachable through a clock that moved between the
			// wait's check and here; keep the promise anyway.
			return fmt.Errorf("retry: deadline reached before attempt %d: %w", k, context.DeadlineExceeded)
		}
		attemptCtx, cancelAttempt := ctx, context.CancelFunc(func() {})
		if p.Timeout > 0 {
			attemptCtx, cancelAttempt = context.WithTimeout(ctx, p.Timeout)
		}
		err := op(attemptCtx)
		cancelAttempt()
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
		if hint, ok := retryAfter(err); ok && hint > 0 && hint > wait {
			wait = hint
		}
		if hasDeadline && wait >= time.Until(deadline) {
			return fmt.Errorf("retry: attempt %d: %w (next wait of %v would reach the deadline: %w)", k, err, wait, context.DeadlineExceeded)
		}
		if p.Budget != nil && !p.Budget.Withdraw() {
			return fmt.Errorf("retry: attempt %d: %w (%w)", k, err, ErrBudgetExhausted)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("retry: waiting after attempt %d: %w (caller gave up: %w)", k, err, ctx.Err())
		case <-timer.C:
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
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var sc StatusCoder
	if errors.As(err, &sc) {
		c := sc.StatusCode()
		return c == 408 || c == 429 || (c >= 500 && c <= 599)
	}
	return true
}

// RetryAfter returns err's positive Retry-After hint.
func RetryAfter(err error) (time.Duration, bool) {
	var ra RetryAfterer
	if errors.As(err, &ra) {
		if d := ra.RetryAfter(); d > 0 {
			return d, true
		}
	}
	return 0, false
}

// Budget is a retry budget: a token bucket shared by every caller of one
// dependency. A Budget is safe for concurrent use.
type Budget struct {
	mu       sync.Mutex
	tokens   int
	capacity int
}

// NewBudget returns a full budget holding capacity tokens (0 if negative).
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
