package provider

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The provider's answers other than success. Every error returned by
// Provider and Client wraps exactly one of these (checked with errors.Is),
// with the operation and key in front: `send "k1": provider: ...`.
//
// They fall into three groups, which Retryable and Ambiguous report:
//
//   - Definite refusals, never retried: ErrInvalidRequest, ErrUnauthorized,
//     ErrParameterMismatch, and ErrNotFound (an answer to a lookup, not a
//     failure).
//   - Definite transient failures, retried with the same key: ErrUnavailable
//     and ErrThrottled. Nothing was committed.
//   - Unknown outcomes: ErrTimeout (no answer; the request may or may not
//     have been committed) and ErrInProgress (the provider is still
//     working on the key; the outcome is not decided yet).
var (
	// ErrInvalidRequest means the request was malformed: an empty key, a
	// key longer than MaxKeyLen or with control characters or surrounding
	// spaces, an empty document id, a recipient that is not an email
	// address, or an HTTP body that is not JSON. Nothing was committed,
	// and sending the same request again fails the same way: it is not
	// retryable. It maps to HTTP 400.
	ErrInvalidRequest = errors.New("provider: invalid request")

	// ErrUnauthorized means the account (the API token) was empty,
	// malformed (control characters, surrounding spaces) or not one the
	// provider knows (see Options.Accounts). It is checked before the
	// request is validated. Nothing was committed and it is not retryable.
	// It maps to HTTP 401.
	ErrUnauthorized = errors.New("provider: unauthorized")

	// ErrNotFound is Status's answer for a key the provider does not know:
	// it was never committed, or it was committed longer than the retention
	// window ago and has been forgotten. It maps to HTTP 404.
	ErrNotFound = errors.New("provider: no signing request with this key")

	// ErrInProgress means another call with the same account and key is
	// still being processed. It is neither a success nor a failure: the
	// caller should wait and then look the key up (Status) or repeat the
	// identical Send, which is safe because the key deduplicates it.
	// Retryable reports true for it on that understanding. It maps to
	// HTTP 409.
	ErrInProgress = errors.New("provider: a request with this key is in progress")

	// ErrParameterMismatch means the key was already used, within the
	// retention window, for a request with different parameters (another
	// document, recipient or subject). Nothing new was committed. It is a
	// bug in the caller (one key reused for two operations) and is not
	// retryable. It maps to HTTP 422.
	ErrParameterMismatch = errors.New("provider: idempotency key reused with different parameters")

	// ErrUnavailable means the provider failed before committing anything
	// (an injected failure or an outage window). It is retryable with the
	// same key. It maps to HTTP 503.
	ErrUnavailable = errors.New("provider: service unavailable")

	// ErrThrottled means the provider refused the call to shed load; nothing
	// was committed. The error is a *ThrottledError carrying a retry-after
	// hint. It is retryable, after the hint. It maps to HTTP 429 with a
	// Retry-After header.
	ErrThrottled = errors.New("provider: throttled")

	// ErrTimeout means the call ended without an answer: the caller's
	// deadline passed, its context was cancelled, the provider-side
	// response timeout fired, or (for Client) the connection broke. The
	// provider may or may not have committed the request, and the caller
	// cannot tell which: the outcome is unknown, and the only safe moves
	// are a Status lookup or a retry with the same key. Errors wrapping
	// ErrTimeout also wrap the context error that caused them
	// (context.DeadlineExceeded or context.Canceled) when there is one. A
	// provider-side response timeout maps to HTTP 504.
	ErrTimeout = errors.New("provider: no response (outcome unknown)")
)

// ThrottledError is the error of a throttled call. It matches ErrThrottled
// with errors.Is, and errors.As extracts it from a wrapped error to read the
// hint.
type ThrottledError struct {
	// RetryAfter is how long the provider asks the caller to wait before
	// trying again. It is positive.
	RetryAfter time.Duration
}

// Error returns a message that includes the hint.
func (e *ThrottledError) Error() string {
	return fmt.Sprintf("%v: retry after %v", ErrThrottled, e.RetryAfter)
}

// Is reports whether target is ErrThrottled.
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

// Retryable reports whether repeating the call (with the same key, after a
// backoff) can succeed: true for ErrUnavailable, ErrThrottled (wait at least
// its RetryAfter), ErrTimeout and ErrInProgress; false for nil,
// ErrInvalidRequest, ErrUnauthorized, ErrParameterMismatch, ErrNotFound, any
// error that wraps context.Canceled (the caller itself gave up), and any
// error the provider does not produce.
//
// A timeout is retryable only because the retry reuses the key, so the
// provider deduplicates it; with a fresh key, retrying a timeout can send the
// document twice. ErrInProgress is retryable in the sense "wait, then look up
// or repeat the same call"; it must never be treated as success or failure.
// A retry loop must still check its own context: an error wrapping
// context.DeadlineExceeded is retryable per attempt, but not after the loop's
// overall deadline.
func Retryable(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, ErrInvalidRequest), errors.Is(err, ErrUnauthorized),
		errors.Is(err, ErrParameterMismatch), errors.Is(err, ErrNotFound):
		return false
	case errors.Is(err, ErrUnavailable), errors.Is(err, ErrThrottled),
		errors.Is(err, ErrTimeout), errors.Is(err, ErrInProgress):
		return true
	}
	return false
}

// Ambiguous reports whether err leaves the outcome of a Send unknown: the
// provider may have committed the signing request although the caller got no
// answer. It is true exactly for errors wrapping ErrTimeout (including a
// cancelled context). A worker must not record such a Send as failed; it
// reconciles with Status, or retries with the same key.
func Ambiguous(err error) bool {
	return errors.Is(err, ErrTimeout)
}

// RetryAfter returns the provider's retry-after hint carried by err (a
// wrapped *ThrottledError), and false when err carries none.
func RetryAfter(err error) (time.Duration, bool) {
	var te *ThrottledError
	if errors.As(err, &te) {
		return te.RetryAfter, true
	}
	return 0, false
}

// timeoutError builds the error of a call that ended without an answer.
// cause is the context error (or context.DeadlineExceeded for the
// provider-side response timeout), wrapped next to ErrTimeout.
func timeoutError(op Op, key string, cause error) error {
	if cause == nil {
		cause = context.DeadlineExceeded
	}
	return fmt.Errorf("%s %q: %w (%w)", op.verb(), key, ErrTimeout, cause)
}
