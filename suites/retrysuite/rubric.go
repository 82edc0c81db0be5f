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
	{
		ID:            "model-sequences",
		Title:         "Every rule holds after any sequence of calls and faults",
		Misconception: "If each rule holds in the scenario I thought of, it holds whatever the dependency answers, whenever the caller gives up and whatever the budget holds.",
		Hint:          "Read the timeline from the top: it is the shortest sequence found that breaks a rule. For the failing call, put its attempts on a time axis: when each failed, which checks applied then (the context, the error, MaxAttempts, the deadline, and the budget last of all), how long the wait was, and how many tokens were left.",
		Docs:          docs + "#mental-model-attempts-on-a-time-axis-inside-a-deadline",
	},
}

// tests are the cases, in the order they run.
var tests = []suites.Test[target]{
	{
		Case: suites.Case{
			Name:        "max_attempts_counts_the_first_try",
			Concept:     "bounded-attempts",
			Rules:       []string{"R1", "R2", "R3"},
			Points:      8,
			Explanation: "MaxAttempts is the number of attempts in total, the first one included: MaxAttempts = 3 is one try and two retries, and an operation that always fails is called exactly three times. MaxAttempts = 0 or -1, and the zero Policy, make exactly one attempt, never none. Do returns nil as soon as an attempt succeeds, and after the last attempt it returns at once, with an error that wraps the last attempt's error.",
		},
		Check: checkAttempts,
	},
	{
		Case: suites.Case{
			Name:        "delay_ceiling_doubles_up_to_the_cap",
			Concept:     "capped-exponential",
			Rules:       []string{"R4", "R5"},
			Points:      7,
			Explanation: "The ceiling of Delay(n) is min(Cap, Base·2ⁿ): Base before the first retry, doubling each time, and never above Cap. Ceiling(n) returns exactly that (a negative n counts as 0; a zero or negative Base or Cap gives 0), and with a generator that always draws its largest value, Delay(n) is that ceiling to the nanosecond, a Cap one nanosecond past Base·2ⁿ included.",
		},
		Check: checkCeiling,
	},
	{
		Case: suites.Case{
			Name:        "do_sleeps_the_backoff_between_attempts",
			Concept:     "capped-exponential",
			Rules:       []string{"R7"},
			Points:      6,
			Explanation: "After attempt k fails, Do waits exactly Delay(k-1) before attempt k+1: given the same seed, the gaps between attempts are the delays Delay(0), Delay(1), ... draws for that seed.",
		},
		Check: checkSchedule,
	},
	{
		Case: suites.Case{
			Name:        "full_jitter_spreads_delays_over_the_window",
			Concept:     "full-jitter",
			Rules:       []string{"R5"},
			Points:      7,
			Explanation: "Delay(n) is uniform over [0, min(Cap, Base·2ⁿ)], both ends included, at the cap too: thousands of draws stay within the bounds, average half the ceiling, fill every quarter of the window and are not all equal, and in a window of 0 to 3ns each of the four values comes up a quarter of the time. Without that spread, clients that failed together retry together.",
		},
		Check: checkFullJitter,
	},
	{
		Case: suites.Case{
			Name:        "retries_across_workers_do_not_synchronise",
			Concept:     "full-jitter",
			Rules:       []string{"R5", "R6"},
			Points:      5,
			Explanation: "A hundred workers whose calls failed at the same moment must not retry at the same moment: that synchronised spike is what knocks a recovering dependency over again.",
		},
		Check: checkWorkers,
	},
	{
		Case: suites.Case{
			Name:        "jitter_comes_from_the_injected_source",
			Concept:     "seeded-source",
			Rules:       []string{"R6", "R7"},
			Points:      6,
			Explanation: "Every random draw, in Delay and in Do, comes from Policy.Rand: the same seed gives the same delays (a failure can be replayed), and different seeds give different delays (workers do not move in step).",
		},
		Check: checkSource,
	},
	{
		Case: suites.Case{
			Name:        "large_retry_numbers_do_not_overflow",
			Concept:     "no-overflow",
			Rules:       []string{"R4"},
			Points:      6,
			Explanation: "Base·2ⁿ leaves the int64 range long before n reaches 64. Delay(64) and Delay(1000) must still be random in [0, Cap], never negative, zero or a panic.",
		},
		Check: checkOverflow,
	},
	{
		Case: suites.Case{
			Name:        "deadline_is_never_crossed",
			Concept:     "deadline",
			Rules:       []string{"R9", "R10"},
			Points:      8,
			Explanation: "One deadline bounds the whole call: Policy.Timeout or the context's deadline, whichever is earlier, in either order. No attempt starts at or after it, and when the next wait would reach it (a wait ending exactly at it included) Do gives up at once, returning the last error together with context.DeadlineExceeded. With neither set (a Timeout of zero or less is not set) there is no deadline, even for waits of days.",
		},
		Check: checkDeadline,
	},
	{
		Case: suites.Case{
			Name:        "every_attempt_runs_under_the_call_deadline",
			Concept:     "deadline",
			Rules:       []string{"R9", "R11"},
			Points:      5,
			Explanation: "The context Do passes to every attempt ends at the deadline of the whole call, the earlier of Timeout and the caller's deadline, not Timeout after that attempt started: an attempt that hangs, the first or a later one, is cut off at the call's deadline, so Do is back by then.",
		},
		Check: checkAttemptContext,
	},
	{
		Case: suites.Case{
			Name:        "cancellation_stops_retrying",
			Concept:     "cancellation",
			Rules:       []string{"R12", "R15"},
			Points:      8,
			Explanation: "When the caller cancels its context, Do stops at once: during a wait, after an attempt that saw the cancellation and failed (without drawing a delay or taking a budget token), or before the first attempt, when it makes none. The error wraps ctx.Err() and the last attempt's error. An attempt that succeeds after the cancel is still a success: nil, and its token goes back. Retrying for a caller who has gone away only adds load.",
		},
		Check: checkCancel,
	},
	{
		Case: suites.Case{
			Name:        "client_errors_are_never_retried",
			Concept:     "permanent-errors",
			Rules:       []string{"R13", "R14"},
			Points:      7,
			Explanation: "Invalid input (400), unauthorized (401) and every other status except 408, 429 and 500 to 599 fail the same way every time, and so does anything wrapping context.Canceled: Do makes one attempt and returns. Every 5xx (501, 507, 599 too), 408, 429 and calls that got no answer are transient and are retried.",
		},
		Check: checkPermanent,
	},
	{
		Case: suites.Case{
			Name:        "retry_after_is_honoured_within_the_deadline",
			Concept:     "retry-after",
			Rules:       []string{"R8", "R10"},
			Points:      6,
			Explanation: "A server that answers with a Retry-After hint says when it can take the next call: Do waits max(backoff, hint), the hint uncapped, even for days. A hint below the backoff, zero or negative changes nothing. But the hint never stretches the deadline: if it ends at or past the deadline, Do gives up at once.",
		},
		Check: checkRetryAfter,
	},
	{
		Case: suites.Case{
			Name:        "retry_budget_fails_fast_under_overload",
			Concept:     "retry-budget",
			Rules:       []string{"R15", "R16"},
			Points:      6,
			Explanation: "Callers that share a budget of N tokens make at most N retries in total while the dependency fails for everyone, and the rest fail fast instead of tripling the load. Each success refills one token, up to N.",
		},
		Check: checkBudget,
	},
	{
		Case: suites.Case{
			Name:        "retry_budget_pays_only_for_retries_made",
			Concept:     "retry-budget",
			Rules:       []string{"R15", "R16"},
			Points:      4,
			Explanation: "A single caller's budget, token by token: a retry takes one token just before its wait, after every other check, so a retry that MaxAttempts, the error or the deadline forbids takes none; each success puts one back, up to the capacity. A budget of 1 pays for one retry, an empty one for none, and a negative capacity counts as 0.",
		},
		Check: checkBudgetAccounting,
	},
	{
		Case: suites.Case{
			Name:        "retry_budget_is_safe_for_concurrent_use",
			Concept:     "retry-budget",
			Rules:       []string{"R17"},
			Points:      2,
			Race:        true,
			Explanation: "Eight callers each Withdraw once from one budget of 4, then each Deposit once into the emptied budget, round after round: no token is handed out twice and no deposit is lost. The suite interleaves the budget's sync.Mutex and sync/atomic operations itself, from the case's seed (graded by labctl, the budget's \"sync\" and \"sync/atomic\" imports point at the kit's suites/syncpoint, same API, same line numbers), so a Load followed by an Add is caught on every run and the seed replays it; rounds on goroutines released together follow, for the race detector. A budget that synchronises otherwise is raced for real, calibrated against a deliberately broken budget: a machine that never runs two calls at once cannot exercise that, and the case then says \"not exercised\" and earns nothing.",
		},
		Check: checkBudgetConcurrency,
	},
	{
		Case: suites.Case{
			Name:        "random_call_sequences_follow_the_rules",
			Concept:     "model-sequences",
			Rules:       []string{"R1", "R2", "R3", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15", "R16"},
			Points:      6,
			Explanation: "A hundred generated sequences of calls, each on a new budget shared by every call of the sequence (or none), every call compared with what the rules allow: Do with MaxAttempts from -1 to 8, Base and Cap from 1ns to a minute, a Timeout, a caller's deadline (one already past too) or both; each attempt answers 200 OK, a retryable error (503, 500, 599, 408, no answer, before or after its effect, 429 or 503 with a Retry-After from -5s to 72h, the dependency's own timeout wrapping context.DeadlineExceeded while the caller's context is alive) or a permanent one (400, 401, 404, 600, 409 after its effect, a wrapped context.Canceled), at once, after up to 3s (overrunning the deadline), or hangs until its context ends; the caller cancels before the call, during an attempt or halfway through a wait; tokens withdrawn and deposited directly, and idle days. Each attempt must start exactly when the delays Delay draws from an identically seeded generator say, Do must return at once with the right error when a rule says stop, its generator must have moved by one Delay per wait, and the budget must hold exactly the tokens the rules leave. A failing sequence is shortened to the fewest steps that still break a rule, and that is the timeline you see.",
		},
		Model: checkModelSequences,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_calls_are_linearizable",
			Concept:     "retry-budget",
			Rules:       []string{"R15", "R16", "R17"},
			Points:      3,
			Race:        true,
			Explanation: "Four callers at once, for real, share a budget of 2 tokens and make four calls each, forty rounds: Withdraw, Deposit, Tokens, and Do against a dependency that fails once and then succeeds, or always fails. Whatever the scheduler did, what each call observed (a token or none, the count, a retry made or refused with ErrBudgetExhausted) must be explained by the budget's operations taking effect one at a time, on one count that never goes below 0 or above the capacity. A history that no such order explains is shown whole. Whether a race shows up varies from run to run, so this case can only ever fail a budget that is wrong; without the race detector, which makes a budget without a lock fail every time, a pass proves nothing and the case says \"not exercised\".",
		},
		Model: checkModelLinearizable,
	},
}
