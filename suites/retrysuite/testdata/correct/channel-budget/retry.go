// Package retry calls an operation again when it fails for a reason that may
// pass: bounded attempts, capped exponential backoff with full jitter, one
// deadline for the whole call, and a shared retry budget.
//
// Style: attempt loop counting retries, a sleep helper built on time.After,
// a shift-free ceiling (compare Base with Cap>>n), and a Budget that is a
// buffered channel of tokens.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// Ceiling returns min(Cap, Base·2ⁿ), computed without overflow.
func (p Policy) Ceiling(n int) time.Duration {
	n = max(n, 0)
	if p.Base <= 0 || p.Cap <= 0 {
		return 0
	}
	// Base·2ⁿ >= Cap  <=>  Base > (Cap-1)>>n ; no multiplication at all.
	if n >= 63 || p.Base > (p.Cap-1)>>uint(n) {
		return p.Cap
	}
	return p.Base << uint(n)
}

// Delay returns a uniformly random duration in [0, Ceiling(n)].
func (p Policy) Delay(n int) time.Duration {
	c := p.Ceiling(n)
	if c == 0 {
		return 0
	}
	return time.Duration(p.Rand.Uint64N(uint64(c) + 1))
}

type outcome struct {
	last  error
	extra error
}

func (o outcome) err() error {
	switch {
	case o.last == nil:
		return fmt.Errorf("retry: no attempt: %w", o.extra)
	case o.extra == nil:
		return fmt.Errorf("retry: %w", o.last)
	default:
		return fmt.Errorf("retry: %w: %w", o.extra, o.last)
	}
}

// sleep waits d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// Do calls op until it succeeds.
func (p Policy) Do(ctx context.Context, op func(ctx context.Context) error) error {
	called := time.Now()
	if ctx.Err() != nil {
		return outcome{extra: ctx.Err()}.err()
	}
	isRetryable, hintOf := p.Retryable, p.RetryAfter
	if isRetryable == nil {
		isRetryable = Retryable
	}
	if hintOf == nil {
		hintOf = RetryAfter
	}
	deadline, bounded := ctx.Deadline()
	if p.Timeout > 0 {
		if t := called.Add(p.Timeout); !bounded || t.Before(deadline) {
			deadline, bounded = t, true
		}
	}
	attemptCtx := ctx
	if bounded {
		var cancel context.CancelFunc
		attemptCtx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	reaches := func(t time.Time) bool { return bounded && !t.Before(deadline) }

	var last error
	for retries := 0; ; retries++ {
		if reaches(time.Now()) {
			return outcome{last, context.DeadlineExceeded}.err()
		}
		last = op(attemptCtx)
		if last == nil {
			if p.Budget != nil {
				p.Budget.Deposit()
			}
			return nil
		}
		switch {
		case ctx.Err() != nil:
			return outcome{last, ctx.Err()}.err()
		case !isRetryable(last):
			return outcome{last: last}.err()
		case retries+1 >= max(p.MaxAttempts, 1):
			return outcome{last: last}.err()
		}
		wait := p.Delay(retries)
		if hint, ok := hintOf(last); ok {
			wait = max(wait, hint)
		}
		if reaches(time.Now().Add(wait)) {
			return outcome{last, context.DeadlineExceeded}.err()
		}
		if p.Budget != nil && !p.Budget.Withdraw() {
			return outcome{last, ErrBudgetExhausted}.err()
		}
		if err := sleep(ctx, wait); err != nil {
			return outcome{last, err}.err()
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
		switch code := sc.StatusCode(); {
		case code == 408, code == 429:
			return true
		case code >= 500 && code < 600:
			return true
		default:
			return false
		}
	}
	return true
}

// RetryAfter returns the positive Retry-After hint carried by err.
func RetryAfter(err error) (time.Duration, bool) {
	var ra RetryAfterer
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		return ra.RetryAfter(), true
	}
	return 0, false
}

// Budget is a retry budget: a token bucket, here a buffered channel whose
// buffered elements are the tokens. Channel operations are safe for
// concurrent use.
type Budget struct {
	tokens chan struct{}
}

// NewBudget returns a full budget holding capacity tokens.
func NewBudget(capacity int) *Budget {
	b := &Budget{tokens: make(chan struct{}, max(capacity, 0))}
	for range cap(b.tokens) {
		b.tokens <- struct{}{}
	}
	return b
}

// Withdraw takes one token for a retry and reports whether there was one.
func (b *Budget) Withdraw() bool {
	select {
	case <-b.tokens:
		return true
	default:
		return false
	}
}

// Deposit puts one token back, unless the budget is full.
func (b *Budget) Deposit() {
	select {
	case b.tokens <- struct{}{}:
	default:
	}
}

// Tokens returns the number of tokens left.
func (b *Budget) Tokens() int { return len(b.tokens) }
