// Package retry calls an operation again when it fails for a reason that may
// pass.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

var _ = rand.Int64N

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
	c := p.Base << uint(n)
	if c > p.Cap || c < 0 {
		return p.Cap
	}
	return c
}

// Delay returns a uniformly random duration in [0, Ceiling(n)].
func (p Policy) Delay(n int) time.Duration {
	c := p.Ceiling(n)
	//@DELAY
	return time.Duration(p.Rand.Uint64N(uint64(c) + 1))
}

// Do calls op until it succeeds.
func (p Policy) Do(ctx context.Context, op func(ctx context.Context) error) error {
	start := time.Now()
	deadline, hasDeadline := ctx.Deadline()
	//@DEADLINE
	if p.Timeout > 0 {
		if d := start.Add(p.Timeout); !hasDeadline || d.Before(deadline) {
			deadline, hasDeadline = d, true
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
	retryable := p.Retryable
	if retryable == nil {
		retryable = Retryable
	}
	hintOf := p.RetryAfter
	if hintOf == nil {
		hintOf = RetryAfter
	}
	maxAttempts := max(p.MaxAttempts, 1)
	var last error
	for k := 1; ; k++ {
		if hasDeadline && !time.Now().Before(deadline) {
			return fmt.Errorf("retry: deadline reached before attempt %d: %w (%w)", k, last, context.DeadlineExceeded)
		}
		//@ATTEMPTCTX
		err := op(actx)
		if err == nil {
			if p.Budget != nil {
				p.Budget.Deposit()
			}
			return nil
		}
		last = err
		//@AFTERATTEMPT
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("retry: attempt %d: %w (%w)", k, err, cerr)
		}
		if !retryable(err) {
			return fmt.Errorf("retry: attempt %d, not retryable: %w", k, err)
		}
		//@BEFOREMAX
		if k >= maxAttempts {
			return fmt.Errorf("retry: %d attempts: %w", k, err)
		}
		wait := p.Delay(k - 1)
		//@HINT
		if h, ok := hintOf(err); ok && h > wait {
			wait = h
		}
		if hasDeadline && !time.Now().Add(wait).Before(deadline) {
			return fmt.Errorf("retry: wait of %v would pass the deadline: %w (%w)", wait, err, context.DeadlineExceeded)
		}
		if p.Budget != nil && !p.Budget.Withdraw() {
			return fmt.Errorf("retry: %w: %w", ErrBudgetExhausted, err)
		}
		//@WAIT
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("retry: waiting: %w (%w)", err, ctx.Err())
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
	//@CANCELED
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var sc StatusCoder
	if errors.As(err, &sc) {
		code := sc.StatusCode()
		//@STATUS
		return code == 408 || code == 429 || (code >= 500 && code <= 599)
	}
	return true
}

// RetryAfter returns the Retry-After hint carried by err.
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
	capacity = max(capacity, 0)
	return &Budget{tokens: capacity, capacity: capacity}
}

// Withdraw takes one token for a retry and reports whether there was one.
func (b *Budget) Withdraw() bool {
	//@WITHDRAW
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens == 0 {
		return false
	}
	b.tokens--
	return true
}

// Deposit puts one token back, unless the budget is already full.
func (b *Budget) Deposit() {
	b.mu.Lock()
	defer b.mu.Unlock()
	//@DEPOSIT
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
