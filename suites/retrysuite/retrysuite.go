// Package retrysuite is the conformance suite of lab 04 (bounded retries
// with backoff, jitter and a deadline). Run checks any retry policy with a
// Delay and a Do method; the lab's test file, the reference solution's test
// file and the grader all call it the same way:
//
//	func TestRetry(t *testing.T) {
//		retrysuite.Run(t, func(c retrysuite.Config[*Budget]) Policy {
//			return Policy{MaxAttempts: c.MaxAttempts, ...}
//		}, NewBudget, ErrBudgetExhausted)
//	}
//
// Everything runs on virtual time (fakeclock): hours of backoff take
// microseconds, and the suite reads the start of every attempt off the
// virtual clock. Random draws come from generators the suite seeds with
// suites.Seed, so a failure prints the seed that replays it.
package retrysuite

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/suites"
)

// Retrier is what lab 04 builds, as the suite sees it: a retry policy.
type Retrier interface {
	// Ceiling returns the upper bound of Delay(n): min(Cap, Base·2ⁿ),
	// without overflow, never negative.
	Ceiling(n int) time.Duration
	// Delay returns the backoff before retry n+1 (n = 0 is the wait after
	// the first attempt failed): full jitter, uniform in
	// [0, min(Cap, Base·2ⁿ)].
	Delay(n int) time.Duration
	// Do calls op until it succeeds or a rule says stop.
	Do(ctx context.Context, op func(ctx context.Context) error) error
}

// Config is a retry policy as the suite describes it. The lab's test file
// copies it field by field into the lab's own Policy type. B is the lab's
// budget type; its zero value (a nil pointer) means "no budget".
type Config[B any] struct {
	MaxAttempts int           // attempts in total, the first one included
	Base        time.Duration // ceiling of the first retry's delay
	Cap         time.Duration // largest ceiling of any delay
	Timeout     time.Duration // time budget of one Do call; 0: ctx's deadline only
	Rand        *rand.Rand    // the injected, seeded source of jitter
	Budget      B             // shared retry budget; the zero value means none
}

// Run runs lab 04's suite. newPolicy turns the suite's Config into the
// lab's policy (a fresh value per call; policies that share a Config.Budget
// share that budget); newBudget returns a full retry budget of the given
// capacity; errBudgetExhausted is the sentinel Do wraps when the budget
// refuses a retry (matched with errors.Is).
func Run[R Retrier, B any](t *testing.T, newPolicy func(c Config[B]) R, newBudget func(capacity int) B, errBudgetExhausted error) {
	t.Helper()
	if errBudgetExhausted == nil {
		t.Fatal("retrysuite.Run: errBudgetExhausted is nil; pass the sentinel your Do wraps when the budget refuses a retry")
	}
	tg := target{
		errBudgetExhausted: errBudgetExhausted,
		policy: func(c Config[any]) Retrier {
			cb := Config[B]{MaxAttempts: c.MaxAttempts, Base: c.Base, Cap: c.Cap, Timeout: c.Timeout, Rand: c.Rand}
			if c.Budget != nil {
				cb.Budget = c.Budget.(B)
			}
			return newPolicy(cb)
		},
		newBudget: func(capacity int) any { return newBudget(capacity) },
	}
	suites.Run(t, Lab, tests, func(*testing.T, *suites.History) target { return tg })
}
