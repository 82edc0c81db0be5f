// Package retry calls an operation again when it fails for a reason that may
// pass: a bounded number of attempts, exponential backoff with full jitter
// and a cap, one deadline for the whole call, and a retry budget shared by
// every caller of a dependency.
//
// Lab 04: bounded retries with backoff, jitter and a deadline. Read
// README.md in this directory first, then make `go run ./cmd/labctl check 4`
// pass.
//
// The scenario: a worker sends documents for signature through a remote API
// that sometimes answers 503, sometimes 429 with a Retry-After header, and
// sometimes does not answer at all. Some failures pass if you try again a
// little later; some never will; and a hundred workers retrying in step can
// keep a recovering service down. Policy.Do is the one place where the
// worker decides whether, when and how often to try again.
package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// ErrBudgetExhausted is wrapped by Do's error when a retry was due but the
// policy's Budget had no token left: the dependency is failing for many
// callers at once, and one more attempt would only add to its load.
var ErrBudgetExhausted = errors.New("retry: retry budget exhausted")

// ErrNotImplemented is what the unfinished starter returns. Delete it when
// Do works.
var ErrNotImplemented = errors.New("retry: not implemented yet (TODO in labs/04-retry/retry.go)")

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
	panic("TODO: Policy.Ceiling is not implemented yet (labs/04-retry/retry.go)")
}

// Delay returns the backoff before retry n+1, where n counts the retries
// already made: n = 0 is the wait after the first attempt failed, before the
// second attempt. It is full jitter: a uniformly random duration in
// [0, min(Cap, Base·2ⁿ)], drawn from p.Rand.
func (p Policy) Delay(n int) time.Duration {
	panic("TODO: Policy.Delay is not implemented yet (labs/04-retry/retry.go)")
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
	// TODO: implement. Start with the README's "What to implement".
	return ErrNotImplemented
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
	panic("TODO: Retryable is not implemented yet (labs/04-retry/retry.go)")
}

// RetryAfter returns the Retry-After hint carried by err (the first
// RetryAfterer in its chain) and true when it is positive, and 0, false
// otherwise.
func RetryAfter(err error) (time.Duration, bool) {
	panic("TODO: RetryAfter is not implemented yet (labs/04-retry/retry.go)")
}

// Budget is a retry budget: a token bucket shared by every caller of one
// dependency. It starts full. Each retry (never a first attempt) takes one
// token, and a retry that finds the bucket empty is not made. Each
// successful attempt puts one token back, up to the capacity.
//
// A Budget is safe for concurrent use.
type Budget struct {
	// TODO: the tokens, the capacity, and whatever keeps concurrent callers
	// safe.
}

// NewBudget returns a full budget holding capacity tokens (0 if negative).
func NewBudget(capacity int) *Budget {
	return &Budget{}
}

// Withdraw takes one token for a retry and reports whether there was one.
func (b *Budget) Withdraw() bool {
	panic("TODO: Budget.Withdraw is not implemented yet (labs/04-retry/retry.go)")
}

// Deposit puts one token back after a successful attempt, unless the budget
// is already full.
func (b *Budget) Deposit() {
	panic("TODO: Budget.Deposit is not implemented yet (labs/04-retry/retry.go)")
}

// Tokens returns the number of tokens left.
func (b *Budget) Tokens() int {
	panic("TODO: Budget.Tokens is not implemented yet (labs/04-retry/retry.go)")
}
