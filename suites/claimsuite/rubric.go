package claimsuite

import "github.com/fourth-outcome/labkit/suites"

// Lab is the rubric of lab 01: its concepts and cases.
var Lab = suites.Lab{
	Number:   1,
	Slug:     "claim",
	Title:    "Claim before you execute",
	TestName: "TestClaim",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/01-claim.md"

var concepts = []suites.Concept{
	{
		ID:            "atomic-claim",
		Title:         "The claim is one atomic step",
		Misconception: "Looking the key up and then inserting it is the same as claiming it, as long as each step is safe on its own.",
		Hint:          "Find the moment where two callers can both have seen \"no record\". The lookup and the insert of the pending record must happen in one step that nobody can interleave with.",
		Docs:          docs + "#the-claim-is-one-atomic-step",
	},
	{
		ID:            "claim-before-execute",
		Title:         "Claim before you execute",
		Misconception: "It is enough to record the key once the work has finished: duplicates will find it then.",
		Hint:          "Ask what a duplicate sees while the first caller's work is still running. The record has to exist before the work starts, not after.",
		Docs:          docs + "#claim-before-you-execute",
	},
	{
		ID:            "pending-vs-complete",
		Title:         "Pending is not complete",
		Misconception: "A key that has been claimed has succeeded, so a duplicate can be answered with success.",
		Hint:          "A pending record has no result yet. The duplicate must learn that the work is in progress (a distinct error it can test with errors.Is), not receive an empty success.",
		Docs:          docs + "#pending-is-not-complete",
	},
	{
		ID:            "stored-result",
		Title:         "The result is stored and replayed",
		Misconception: "Once the work is done the key can be forgotten; duplicates only matter while the work runs.",
		Hint:          "Retries arrive late: after a timeout, after a redelivery, after a restart. Keep the completed record and answer duplicates from it.",
		Docs:          docs + "#the-result-is-stored-and-replayed",
	},
	{
		ID:            "failure-release",
		Title:         "A failure must not leave the key stuck",
		Misconception: "If the work fails, the pending record can simply stay where it is.",
		Hint:          "Follow a key whose work returned an error: what does the next attempt with the same key get, now and in an hour? This lab releases the claim on failure.",
		Docs:          docs + "#a-failure-must-not-leave-the-key-stuck",
	},
	{
		ID:            "per-key-isolation",
		Title:         "Different keys never wait for each other",
		Misconception: "One lock around the whole operation is the simplest way to make it safe.",
		Hint:          "Hold a lock only for the claim and the record updates, never while the work runs. Work for another key must be able to start at once.",
		Docs:          docs + "#different-keys-never-wait-for-each-other",
	},
	{
		ID:            "exact-keys",
		Title:         "The key is compared exactly",
		Misconception: "Keys that look the same, like \"Task-42\" and \"task-42 \", are the same task, so the store may normalise them.",
		Hint:          "The key is an identity chosen by the caller, not text to tidy up. Use it exactly as given, byte for byte, as the map key.",
		Docs:          docs + "#the-key-is-compared-exactly",
	},
	{
		ID:            "model-sequences",
		Title:         "Every rule holds after any sequence of calls",
		Misconception: "If each rule holds in the scenario I thought of, it holds in every order of calls.",
		Hint:          "Read the timeline from the top: it is the shortest sequence of calls found that breaks a rule. Which key does your store think each call is about, and which state (free, in progress, done) does it believe that key is in?",
		Docs:          docs + "#mental-model-three-states-and-one-door-into-pending",
	},
	{
		ID:            "results-unchanged",
		Title:         "Results come back unchanged",
		Misconception: "The store may wrap, copy or replace what the work returned.",
		Hint:          "Return the work's value and error exactly as they came back, so callers can still use errors.Is and compare values.",
		Docs:          docs + "#results-come-back-unchanged",
	},
}

// tests are the cases, in the order they run.
var tests = []suites.Test[target]{
	{
		Case: suites.Case{
			Name:        "results_returned_unchanged",
			Concept:     "results-unchanged",
			Rules:       []string{"R1"},
			Points:      8,
			Explanation: "The first call with a new key runs the work once and returns exactly what it produced: the same value, or the very same error value, so callers can still match it with errors.Is.",
		},
		Check: checkFirstCall,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_duplicates_execute_once",
			Concept:     "claim-before-execute",
			Rules:       []string{"R2", "R3"},
			Points:      12,
			Explanation: "Twenty workers submit the same key while the first one is still working. The work must run exactly once; otherwise a retry charges the customer twice.",
		},
		Check: checkConcurrentDuplicates,
	},
	{
		Case: suites.Case{
			Name:        "simultaneous_claims_execute_once",
			Concept:     "atomic-claim",
			Rules:       []string{"R3"},
			Points:      12,
			Explanation: "Eight workers race for one key, round after round; exactly one may win each race, so the lookup and the insert must be a single atomic step. Graded by labctl, the suite itself interleaves the workers' Lock and Unlock calls, their sync.Map and their sync/atomic operations from the case's seed, so a claim split over two lock sections, or a Load followed by a Store, is caught on every run; code that synchronises otherwise is raced for real.",
		},
		Check: checkSimultaneousClaims,
	},
	{
		Case: suites.Case{
			Name:        "pending_duplicate_is_told_in_progress",
			Concept:     "pending-vs-complete",
			Rules:       []string{"R2"},
			Points:      8,
			Explanation: "A duplicate that arrives while the work runs must get an \"in progress\" error (errors.Is with the lab's sentinel), never an empty success and never a second execution.",
		},
		Check: checkPendingDuplicate,
	},
	{
		Case: suites.Case{
			Name:        "long_pending_claim_is_still_in_progress",
			Concept:     "pending-vs-complete",
			Rules:       []string{"R2"},
			Points:      5,
			Explanation: "The first call's work runs for two days of virtual time. Duplicates after a minute, an hour and two days are all told \"in progress\" and run nothing: in this lab a claim never expires, so an old claim is not an abandoned one.",
		},
		Check: checkLongPendingDuplicate,
	},
	{
		Case: suites.Case{
			Name:        "completed_duplicate_gets_stored_result",
			Concept:     "stored-result",
			Rules:       []string{"R4"},
			Points:      10,
			Explanation: "A duplicate that arrives after the work succeeded, a second or a year later, gets the stored value (an empty one too) without running the work again.",
		},
		Check: checkCompletedDuplicate,
	},
	{
		Case: suites.Case{
			Name:        "cancelled_caller_keeps_its_success",
			Concept:     "stored-result",
			Rules:       []string{"R1", "R6"},
			Points:      8,
			Explanation: "The caller's context is cancelled (or passes its deadline) while the work runs, and the work succeeds anyway: the signing request went out. The caller gets the success, and the success is stored, so a retry does not send the request again.",
		},
		Check: checkCancelledCallerKeepsSuccess,
	},
	{
		Case: suites.Case{
			Name:        "failed_execution_releases_key",
			Concept:     "failure-release",
			Rules:       []string{"R5"},
			Points:      8,
			Explanation: "When the work fails, the caller gets that failure and the key is released, so the next attempt with the same key runs the work again instead of being told \"in progress\" forever.",
		},
		Check: checkFailureReleases,
	},
	{
		Case: suites.Case{
			Name:        "keys_compare_exactly",
			Concept:     "exact-keys",
			Rules:       []string{"R7"},
			Points:      5,
			Explanation: "Keys that differ only in case, in spaces, in how an accented letter is encoded or in bytes that are not valid UTF-8, and the empty key, are all different keys: each runs its own work once, and afterwards gets its own stored result. A store that cleans keys up (or converts them to []rune, which turns every invalid byte into U+FFFD) answers one customer's task with another's result.",
		},
		Check: checkKeysCompareExactly,
	},
	{
		Case: suites.Case{
			Name:        "different_keys_do_not_block_each_other",
			Concept:     "per-key-isolation",
			Rules:       []string{"R8"},
			Points:      9,
			Explanation: "While slow work runs for one key, work for another key starts and finishes at once. A lock held during execution would serialise every customer behind the slowest one.",
		},
		Check: checkKeysIndependent,
	},
	{
		Case: suites.Case{
			Name:        "random_call_sequences_follow_the_rules",
			Concept:     "model-sequences",
			Rules:       []string{"R1", "R2", "R4", "R5", "R6", "R7", "R8"},
			Points:      10,
			Explanation: "A hundred generated sequences of calls, each on a new store, compared step by step with the rules: Do with work that succeeds or fails, work held while other calls arrive, cancelled contexts, clock jumps of up to 400 days, and keys drawn to collide (the empty key, case and spaces, two encodings of one letter, invalid UTF-8 bytes that a []rune conversion merges, a NUL, 70 KB keys that differ in their last byte). A failing sequence is shortened to the fewest steps that still break a rule, and that is the timeline you see.",
		},
		Model: checkModelSequences,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_calls_are_linearizable",
			Concept:     "atomic-claim",
			Rules:       []string{"R2", "R3", "R4", "R5"},
			Points:      5,
			Explanation: "Four callers at once, for real, make four calls each on three keys, round after round; whatever the scheduler did, what each call returned must be explainable by the calls taking effect one at a time (the claim between Do's call and the work's start, the completion or release between the work's return and Do's return). A history that no such order explains is shown whole. Whether a race shows up varies from run to run, so this case can only ever fail a store that is wrong.",
		},
		Model: checkModelLinearizable,
	},
}
