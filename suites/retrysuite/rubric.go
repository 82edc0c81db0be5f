package retrysuite

import "github.com/fourth-outcome/labkit/suites"

// Lab is the rubric of lab 04: its concepts and cases.
var Lab = suites.Lab{
	Number:   4,
	Slug:     "retry",
	Title:    "Bounded retries with backoff, jitter and a deadline",
	TestName: "TestRetry",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/04-retry.md"

var concepts = []suites.Concept{
	{
		ID:            "bounded-attempts",
		Title:         "Attempts are bounded, and attempts are not retries",
		Misconception: "MaxAttempts is the number of retries, and one more wait after the last failure does no harm.",
		Hint:          "Count on your fingers for MaxAttempts = 3: the first try is attempt 1, so there are at most two retries. After the last attempt fails there is nothing left to wait for: return at once.",
		Docs:          docs + "#attempts-and-retries",
	},
	{
		ID:            "capped-exponential",
		Title:         "Exponential backoff with a cap",
		Misconception: "Doubling the delay on every retry is enough; it never gets out of hand.",
		Hint:          "Write the ceiling for retries 0, 1, 2, ... on paper: Base, 2·Base, 4·Base, and where Cap stops it. Then check that Do sleeps Delay(0) after attempt 1, Delay(1) after attempt 2, and so on.",
		Docs:          docs + "#exponential-backoff-with-a-cap",
	},
	{
		ID:            "full-jitter",
		Title:         "Full jitter spreads retries over the whole window",
		Misconception: "Jitter is a small extra on top of the backoff, or not needed at all when the backoff grows.",
		Hint:          "The delay is one uniform draw between zero and the capped ceiling: U(0, min(Cap, Base·2ⁿ)). Apply the cap to the ceiling first, then draw; never add anything after the cap, and never clamp the draw to the cap.",
		Docs:          docs + "#full-jitter",
	},
	{
		ID:            "seeded-source",
		Title:         "Randomness comes from the injected source",
		Misconception: "Any random generator will do, and a fixed seed of my own makes the delays reproducible.",
		Hint:          "Draw every random number from Policy.Rand, and create no generator of your own anywhere. The caller seeds that one; the same seed must give the same delays, and different seeds different ones.",
		Docs:          docs + "#randomness-comes-from-the-injected-source",
	},
	{
		ID:            "no-overflow",
		Title:         "Large retry numbers do not overflow",
		Misconception: "Base << n is Base times two to the n, for any n.",
		Hint:          "A time.Duration is an int64 of nanoseconds: 100ms << 37 no longer fits, and a shift by 64 or more gives 0. Decide that the ceiling has reached Cap before computing anything that could overflow, for example by comparing Base with Cap >> n.",
		Docs:          docs + "#large-retry-numbers-do-not-overflow",
	},
	{
		ID:            "deadline",
		Title:         "One deadline for the whole call",
		Misconception: "Checking that the deadline has not passed before each wait is enough.",
		Hint:          "Before sleeping, ask whether now + wait would reach the deadline. If it would, give up at once with the last error (and context.DeadlineExceeded): sleeping until the deadline only to fail then helps nobody, and sleeping past it starts an attempt nobody waits for.",
		Docs:          docs + "#one-deadline-for-the-whole-call",
	},
	{
		ID:            "cancellation",
		Title:         "Cancellation stops retrying at once",
		Misconception: "A cancelled context is one more failed attempt; the loop will notice eventually.",
		Hint:          "Wait with a timer inside a select that also watches ctx.Done(), and stop when it fires. Check ctx.Err() after each attempt too: if the caller gave up, no further attempt helps them.",
		Docs:          docs + "#cancellation-stops-retrying",
	},
	{
		ID:            "permanent-errors",
		Title:         "Only transient errors are retried",
		Misconception: "Any error might go away on a second try, so every error deserves a retry.",
		Hint:          "Sort errors into those that can succeed later (5xx, 408, 429, no answer at all) and those that fail the same way every time (400 invalid input, 401 unauthorized, 403, 404, 422). Consult that classification before every retry.",
		Docs:          docs + "#only-transient-errors-are-retried",
	},
	{
		ID:            "retry-after",
		Title:         "Retry-After is a floor, the deadline a ceiling",
		Misconception: "My backoff knows better than the server when to try again, and a server's hint must be obeyed even past my deadline.",
		Hint:          "Wait max(backoff, hint). Then apply the same deadline rule as for any wait: if it would end past the deadline, give up now.",
		Docs:          docs + "#retry-after-is-a-floor-the-deadline-a-ceiling",
	},
	{
		ID:            "retry-budget",
		Title:         "A retry budget fails fast under overload",
		Misconception: "Each caller's own attempt limit is enough to protect the dependency.",
		Hint:          "Take a token from the shared budget just before each retry (after the other checks, before sleeping) and give up at once when there is none. Every successful attempt puts one token back, never above the capacity.",
		Docs:          docs + "#a-retry-budget",
	},
}

// tests are the cases, in the order they run.
var tests = []suites.Test[target]{
	{
		Case: suites.Case{
			Name:        "max_attempts_counts_the_first_try",
			Concept:     "bounded-attempts",
			Points:      10,
			Explanation: "MaxAttempts is the number of attempts in total, the first one included: MaxAttempts = 3 is one try and two retries, and an operation that always fails is called exactly three times. After the last attempt Do returns at once, with an error that wraps the last attempt's error.",
		},
		Check: checkAttempts,
	},
	{
		Case: suites.Case{
			Name:        "delay_ceiling_doubles_up_to_the_cap",
			Concept:     "capped-exponential",
			Points:      8,
			Explanation: "The ceiling of Delay(n) is min(Cap, Base·2ⁿ): Base before the first retry, doubling each time, and never above Cap. With a generator that always draws its largest value, Delay(n) must be that ceiling.",
		},
		Check: checkCeiling,
	},
	{
		Case: suites.Case{
			Name:        "do_sleeps_the_backoff_between_attempts",
			Concept:     "capped-exponential",
			Points:      7,
			Explanation: "After attempt k fails, Do waits exactly Delay(k-1) before attempt k+1: given the same seed, the gaps between attempts are the delays Delay(0), Delay(1), ... draws for that seed.",
		},
		Check: checkSchedule,
	},
	{
		Case: suites.Case{
			Name:        "full_jitter_spreads_delays_over_the_window",
			Concept:     "full-jitter",
			Points:      10,
			Explanation: "Delay(n) is uniform over [0, min(Cap, Base·2ⁿ)], at the cap too: thousands of draws stay within the bounds, average half the ceiling, fill every quarter of the window and are not all equal. Without that spread, clients that failed together retry together.",
		},
		Check: checkFullJitter,
	},
	{
		Case: suites.Case{
			Name:        "retries_across_workers_do_not_synchronise",
			Concept:     "full-jitter",
			Points:      8,
			Explanation: "A hundred workers whose calls failed at the same moment must not retry at the same moment: that synchronised spike is what knocks a recovering dependency over again.",
		},
		Check: checkWorkers,
	},
	{
		Case: suites.Case{
			Name:        "jitter_comes_from_the_injected_source",
			Concept:     "seeded-source",
			Points:      7,
			Explanation: "Every random draw, in Delay and in Do, comes from Policy.Rand: the same seed gives the same delays (a failure can be replayed), and different seeds give different delays (workers do not move in step).",
		},
		Check: checkSource,
	},
	{
		Case: suites.Case{
			Name:        "large_retry_numbers_do_not_overflow",
			Concept:     "no-overflow",
			Points:      7,
			Explanation: "Base·2ⁿ leaves the int64 range long before n reaches 64. Delay(64) and Delay(1000) must still be random in [0, Cap], never negative, zero or a panic.",
		},
		Check: checkOverflow,
	},
	{
		Case: suites.Case{
			Name:        "deadline_is_never_crossed",
			Concept:     "deadline",
			Points:      10,
			Explanation: "One deadline bounds the whole call (Policy.Timeout or the context's deadline). No attempt starts at or after it, and when the next wait would reach it Do gives up at once, returning the last error together with context.DeadlineExceeded.",
		},
		Check: checkDeadline,
	},
	{
		Case: suites.Case{
			Name:        "cancellation_stops_retrying",
			Concept:     "cancellation",
			Points:      10,
			Explanation: "When the caller cancels its context, Do stops at once: during a wait, after an attempt that saw the cancellation, or before the first attempt. Retrying for a caller who has gone away only adds load.",
		},
		Check: checkCancel,
	},
	{
		Case: suites.Case{
			Name:        "client_errors_are_never_retried",
			Concept:     "permanent-errors",
			Points:      8,
			Explanation: "Invalid input (400), unauthorized (401) and the other 4xx answers except 408 and 429 fail the same way every time: Do makes one attempt and returns. 5xx, 408, 429 and calls that got no answer are transient and are retried.",
		},
		Check: checkPermanent,
	},
	{
		Case: suites.Case{
			Name:        "retry_after_is_honoured_within_the_deadline",
			Concept:     "retry-after",
			Points:      7,
			Explanation: "A server that answers with a Retry-After hint is told when it can take the next call: Do waits at least that long. But the hint never stretches the deadline: if it ends past the deadline, Do gives up at once.",
		},
		Check: checkRetryAfter,
	},
	{
		Case: suites.Case{
			Name:        "retry_budget_fails_fast_under_overload",
			Concept:     "retry-budget",
			Points:      8,
			Explanation: "Callers that share a budget of N tokens make at most N retries in total while the dependency fails for everyone, and the rest fail fast instead of tripling the load. Each success refills one token, up to N.",
		},
		Check: checkBudget,
	},
}
