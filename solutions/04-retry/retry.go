// Package retry calls an operation again when it fails for a reason that may
// pass: a bounded number of attempts, exponential backoff with full jitter
// and a cap, one deadline for the whole call, and a retry budget shared by
// every caller of a dependency.
//
// This is the reference solution of lab 04. Every rule a retry loop needs is
// in Do, in the order it applies after an attempt fails: stop if the caller
// gave up, stop if the error cannot succeed on a second try, stop if the
// attempts are used up, stop if the wait would end past the deadline, stop if
// the budget has no token left, and only then sleep, on a timer that the
// caller's context can interrupt.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// ErrBudgetExhausted is wrapped by Do's error when a retry was due but the
// policy's Budget had no token left: the dependency is failing for many
// callers at once, and one more attempt would only add to its load.
var ErrBudgetExhausted = errors.New("retry: retry budget exhausted")

// Policy says how Do retries. The zero value makes one attempt and never
// retries; a useful policy sets at least MaxAttempts, Base, Cap and Rand.
//
// A Policy holds a *rand.Rand, which is not safe for concurrent use: give
// each goroutine its own Policy with its own generator. The Budget, on the
// contrary, is meant to be shared by every caller of one dependency.
type Policy struct {
	// MaxAttempts is the number of attempts in total, the first one
	// included: 3 means one try and at most two retries. Values below 1
	// count as 1.
	MaxAttempts int

	// Base is the ceiling of the first retry's delay. Each further retry
	// doubles the ceiling, up to Cap.
	Base time.Duration

	// Cap is the largest ceiling: no backoff delay is ever longer. (A
	// server's Retry-After hint may still ask for a longer wait.)
	Cap time.Duration

	// Timeout is the time budget of one Do call, across all attempts and
	// waits, counted from the moment Do is called. Zero or less: no limit
	// but ctx's deadline; when both are set, the earlier one wins.
	Timeout time.Duration

	// Rand is the source of jitter. Seed it (rand.New(rand.NewPCG(seed,
	// 0))) and the delays are reproducible. It must not be nil when a
	// retry can happen.
	Rand *rand.Rand

	// Budget, when not nil, limits retries across every caller sharing it.
	// See Budget.
	Budget *Budget

	// Retryable decides whether an attempt's error is worth another
	// attempt. Nil means the package's Retryable, which reads HTTP status
	// codes; provider.Retryable from this kit fits here too.
	Retryable func(err error) bool

	// RetryAfter extracts a server's Retry-After hint from an error. Nil
	// means the package's RetryAfter; provider.RetryAfter fits here too.
	RetryAfter func(err error) (time.Duration, bool)
}

// Ceiling returns the upper bound of Delay(n): min(Cap, Base·2ⁿ), computed
// without overflow for every n (a negative n counts as 0). It is never
// negative.
func (p Policy) Ceiling(n int) time.Duration {
	n = max(n, 0)
	switch {
	case p.Base <= 0 || p.Cap <= 0:
		return 0
	case p.Base >= p.Cap:
		return p.Cap
	case n >= 63 || p.Base > p.Cap>>n:
		// Base·2ⁿ > Cap: shifting Cap right instead of Base left asks the
		// same question without ever leaving the int64 range.
		return p.Cap
	default:
		return p.Base << n
	}
}

// Delay returns the backoff before retry n+1, where n counts the retries
// already made: n = 0 is the wait after the first attempt failed, before the
// second attempt. It is full jitter: a uniformly random duration in
// [0, min(Cap, Base·2ⁿ)], drawn from p.Rand.
func (p Policy) Delay(n int) time.Duration {
	c := p.Ceiling(n)
	if c <= 0 {
		return 0
	}
	// Uint64N(c+1) covers [0, c] inclusive; in uint64 the +1 cannot
	// overflow even when c is the largest Duration.
	return time.Duration(p.Rand.Uint64N(uint64(c) + 1))
}

// Do calls op until it succeeds, and returns nil as soon as it does (even
// if ctx was cancelled while that attempt ran: the work is done). It stops
// early, without sleeping, and returns an error wrapping op's last error in
// each of these cases:
//
//   - ctx is done (before an attempt, during one, or during a wait): the
//     error also wraps ctx.Err(). An already cancelled ctx makes no attempt.
//   - op's error is not retryable (invalid input, unauthorized...).
//   - MaxAttempts attempts have been made.
//   - the next wait would end at or after the deadline (Timeout or ctx's
//     deadline, whichever comes first): the error also wraps
//     context.DeadlineExceeded. No attempt ever starts after the deadline.
//   - the Budget has no token for the retry: the error also wraps
//     ErrBudgetExhausted.
//
// After attempt k fails with a retryable error, Do waits Delay(k-1), or the
// error's Retry-After hint if that is longer, and tries again. Every attempt
// gets a context that ends at the deadline. A successful attempt deposits a
// token in the Budget.
func (p Policy) Do(ctx context.Context, op func(ctx context.Context) error) error {
	retryable, retryAfter := p.Retryable, p.RetryAfter
	if retryable == nil {
		retryable = Retryable
	}
	if retryAfter == nil {
		retryAfter = RetryAfter
	}
	maxAttempts := max(p.MaxAttempts, 1)

	// One deadline for the whole call: the attempts run under it, and the
	// loop refuses any wait that would end past it.
	attemptCtx := ctx
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		attemptCtx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	deadline, hasDeadline := attemptCtx.Deadline()

	var err error
	for attempt := 1; ; attempt++ {
		if cerr := ctx.Err(); cerr != nil {
			if err == nil {
				return fmt.Errorf("retry: no attempt made: %w", cerr)
			}
			return fmt.Errorf("retry: stopped after %d attempts: %w: %w", attempt-1, cerr, err)
		}

		err = op(attemptCtx)
		if err == nil {
			if p.Budget != nil {
				p.Budget.Deposit()
			}
			return nil
		}

		// The caller gave up while the attempt ran: whatever op says,
		// nobody is waiting for another attempt.
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("retry: attempt %d: %w: %w", attempt, cerr, err)
		}
		if !retryable(err) {
			return fmt.Errorf("retry: attempt %d failed and is not retryable: %w", attempt, err)
		}
		if attempt >= maxAttempts {
			return fmt.Errorf("retry: all %d attempts failed: %w", attempt, err)
		}

		wait := p.Delay(attempt - 1)
		if hint, ok := retryAfter(err); ok && hint > wait {
			wait = hint
		}
		if hasDeadline && !time.Now().Add(wait).Before(deadline) {
			return fmt.Errorf("retry: attempt %d failed and waiting %v more would cross the deadline: %w: %w",
				attempt, wait, context.DeadlineExceeded, err)
		}
		// Ask the budget last: a retry that the deadline forbids must not
		// spend a token.
		if p.Budget != nil && !p.Budget.Withdraw() {
			return fmt.Errorf("retry: attempt %d failed: %w: %w", attempt, ErrBudgetExhausted, err)
		}
		if serr := sleep(ctx, wait); serr != nil {
			return fmt.Errorf("retry: stopped after %d attempts: %w: %w", attempt, serr, err)
		}
	}
}

// sleep waits for d, or until ctx is done, whichever comes first, and
// returns ctx.Err() in the second case. It uses a timer rather than
// time.Sleep so that cancellation interrupts the wait.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// StatusCoder is implemented by errors that carry the HTTP status code of a
// remote API's answer. Retryable looks for one anywhere in an error's chain
// (errors.As), so any package's error type can take part without importing
// this one.
type StatusCoder interface {
	StatusCode() int
}

// RetryAfterer is implemented by errors that carry a server's Retry-After
// hint: how long the server asks the client to wait before trying again.
type RetryAfterer interface {
	RetryAfter() time.Duration
}

// Retryable reports whether another attempt after err can succeed:
//
//   - nil, and any error wrapping context.Canceled (the caller gave up):
//     false.
//   - an error whose chain has a StatusCoder: true for 408 Request Timeout,
//     429 Too Many Requests and every 5xx; false for every other status,
//     in particular 400 (invalid input), 401 (unauthorized), 403, 404 and
//     422, which fail the same way every time.
//   - any other error (no answer at all: a reset connection, a timeout):
//     true. Retrying it is only safe because the operation carries an
//     idempotency key (labs 01 to 03).
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var sc StatusCoder
	if !errors.As(err, &sc) {
		return true
	}
	switch code := sc.StatusCode(); {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code >= 500 && code <= 599:
		return true
	default:
		return false
	}
}

// RetryAfter returns the Retry-After hint carried by err (the first
// RetryAfterer in its chain) and true when it is positive, and 0, false
// otherwise.
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
// dependency. It starts full. Each retry (never a first attempt) takes one
// token, and a retry that finds the bucket empty is not made. Each
// successful attempt puts one token back, up to the capacity. While the
// dependency is healthy the bucket stays full; when it fails for everyone,
// the bucket drains after capacity retries and further failures fail fast,
// so the callers add at most their first attempts to the load of a
// dependency that is already struggling.
//
// A Budget is safe for concurrent use.
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
	if b.tokens == 0 {
		return false
	}
	b.tokens--
	return true
}

// Deposit puts one token back after a successful attempt, unless the budget
// is already full.
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
