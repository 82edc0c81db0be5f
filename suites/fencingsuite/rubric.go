package fencingsuite

import "github.com/fourth-outcome/labkit/suites"

// Lab is the rubric of lab 06: its concepts and cases.
var Lab = suites.Lab{
	Number:   6,
	Slug:     "fencing",
	Title:    "Fencing tokens against zombie workers",
	TestName: "TestFencing",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/06-fencing.md"

var concepts = []suites.Concept{
	{
		ID:            "exclusive-lease",
		Title:         "One holder at a time, for a bounded time",
		Misconception: "A lock is granted to whoever asks when it looks free, and asking again while I hold it is harmless.",
		Hint:          "Decide in one step, under one lock, whether the resource is free and who gets it. A resource that is held is refused to everybody, its own holder included, and every grant ends TTL after the Acquire that made it.",
		Docs:          docs + "#one-holder-at-a-time-for-a-bounded-time",
	},
	{
		ID:            "lease-expiry",
		Title:         "A lease ends by itself",
		Misconception: "A lock stays held until its holder releases it; expiry is a cleanup detail.",
		Hint:          "A crashed holder never releases. Compare the clock with the grant's Expires on every Acquire: before it, held; at it and after it, free.",
		Docs:          docs + "#a-lease-ends-by-itself",
	},
	{
		ID:            "monotonic-tokens",
		Title:         "Every grant gets a larger token",
		Misconception: "A token only has to be unique, like an ID, and a lock that is handed on after an expiry can keep the number it had.",
		Hint:          "The resource orders writers by their token, so the token must say \"granted later\". Take it from a counter that moves on every grant, re-grants after an expiry or a release included, never from a random source.",
		Docs:          docs + "#every-grant-gets-a-larger-token",
	},
	{
		ID:            "release-own-grant",
		Title:         "Only the current grant can be released",
		Misconception: "A worker may release the lock it took, whenever it gets round to it.",
		Hint:          "By the time a slow worker releases, its grant may have expired and the resource may belong to someone else, maybe under the same worker name. Identify the grant by its token, and refuse a release of anything but the current, unexpired grant.",
		Docs:          docs + "#only-the-current-grant-can-be-released",
	},
	{
		ID:            "highest-seen",
		Title:         "The resource keeps the highest token it has seen",
		Misconception: "The next writer must carry the next number, and a token the store has already seen is a replay.",
		Hint:          "The store cannot know which tokens were granted, only which it has accepted. Refuse a token lower than the highest accepted; accept an equal one (its holder writing again) and any higher one, however many numbers it skips.",
		Docs:          docs + "#the-resource-keeps-the-highest-token-it-has-seen",
	},
	{
		ID:            "stale-refused",
		Title:         "A lower token is refused",
		Misconception: "The lock already decides who may write, so the store can take every write it is sent.",
		Hint:          "A paused worker does not know its lease ended, so only the store can stop it. Compare the write's token with the key's highest accepted token and refuse a lower one, or zero, with ErrStaleToken, leaving the key as it was.",
		Docs:          docs + "#a-lower-token-is-refused",
	},
	{
		ID:            "zombie-fenced",
		Title:         "The zombie is stopped at the resource",
		Misconception: "Once its lease has expired, a worker stops writing: the lease is the protection.",
		Hint:          "Play the scenario: A holds a token, pauses past its lease, B is granted a larger token and writes, A wakes and writes. Which of your two components can still tell A's write apart from B's at that moment?",
		Docs:          docs + "#worked-example-the-zombie-with-token-33",
	},
	{
		ID:            "atomic-check-and-write",
		Title:         "The check and the write are one step",
		Misconception: "Checking the token and then writing is safe as long as each step is done under the lock.",
		Hint:          "Between a check and a separate write, a higher token can be written; the lower write then lands on top of it. Compare and store in one critical section (or one compare-and-swap).",
		Docs:          docs + "#the-check-and-the-write-are-one-step",
	},
	{
		ID:            "per-key-fencing",
		Title:         "Each key has its own highest token",
		Misconception: "One high-water mark for the whole store is simpler and just as safe.",
		Hint:          "Tokens are ordered per resource: another lock's tokens may be much larger, or much smaller. Keep the highest accepted token next to each key's value.",
		Docs:          docs + "#each-key-has-its-own-highest-token",
	},
	{
		ID:            "no-unchecked-write",
		Title:         "No write without its check",
		Misconception: "If the store cannot read the key's token, the key is as good as new, and an error from storage can be logged and forgotten.",
		Hint:          "Treat a failed Get as \"I do not know the fence\", not as \"there is no fence\": return the error and write nothing. Return every KV error wrapped, so the caller knows the write did not happen (or may not have).",
		Docs:          docs + "#no-write-without-its-check",
	},
	{
		ID:            "context-done",
		Title:         "A cancelled call changes nothing",
		Misconception: "The context is only for slow calls; an in-memory call can ignore it.",
		Hint:          "Check ctx before you change anything, in every method, and return an error wrapping ctx.Err(): a caller that gave up must not end up holding a lock or having written.",
		Docs:          docs + "#a-cancelled-call-changes-nothing",
	},
	{
		ID:            "model-sequences",
		Title:         "Every rule holds after any sequence of calls",
		Misconception: "If each rule holds in the scenario I thought of, it holds in every order of calls, expiries and failures.",
		Hint:          "Read the timeline from the top: it is the shortest sequence of calls found that breaks a rule. For each resource, which grant does your lock service think holds it, and until when? For each key, which token and value does your store think it holds?",
		Docs:          docs + "#worked-example-the-zombie-with-token-33",
	},
}

// tests are the cases, in the order they run.
var tests = []suites.Test[target]{
	{
		Case: suites.Case{
			Name:        "grant_carries_holder_token_and_expiry",
			Concept:     "exclusive-lease",
			Rules:       []string{"R1"},
			Points:      6,
			Explanation: "A grant names its resource and holder, carries a token other than zero, and expires TTL after the Acquire that made it: 10s for a TTL of 10s, DefaultLockTTL (30s) for a TTL left zero, 1ns for 1ns. A negative TTL is refused with ErrInvalidTTL.",
		},
		Check: checkGrant,
	},
	{
		Case: suites.Case{
			Name:        "held_resource_is_refused_to_everyone",
			Concept:     "exclusive-lease",
			Rules:       []string{"R2"},
			Points:      6,
			Explanation: "While a grant holds, up to a nanosecond before it expires, Acquire of its resource is refused at once with ErrLockHeld, to another worker and to the holder itself; other resources, even ones whose names differ only in case or spaces, are granted meanwhile.",
		},
		Check: checkHeld,
	},
	{
		Case: suites.Case{
			Name:        "lease_ends_by_itself_at_expiry",
			Concept:     "lease-expiry",
			Rules:       []string{"R3"},
			Points:      8,
			Explanation: "Nobody releases: the holder has crashed. At the grant's Expires exactly, the resource is granted to the next worker, and again three days later. A lock that waits for a release is held for ever by a dead worker.",
		},
		Check: checkExpiry,
	},
	{
		Case: suites.Case{
			Name:        "tokens_increase_on_every_grant",
			Concept:     "monotonic-tokens",
			Rules:       []string{"R4"},
			Points:      8,
			Explanation: "Forty grants of one resource, re-granted after an expiry, after a release, three days later and interleaved with grants of another resource: each carries a larger token than every earlier grant of the same resource. The resource orders writers by nothing else.",
		},
		Check: checkTokensIncrease,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_grants_one_holder_at_a_time",
			Concept:     "exclusive-lease",
			Rules:       []string{"R2", "R4"},
			Points:      4,
			Explanation: "Eight workers race for one resource, each winner releasing at once: ten rounds in which the suite picks, from the seed, who runs at every Lock and Unlock of your lock service, then fifty real races. Never two holders at once, every grant's token larger than the one before, and no unsynchronised state for the race detector to find. A lock service the suite cannot schedule, checked without the race detector, gets the case reported as not exercised.",
		},
		Check: checkConcurrentGrants,
	},
	{
		Case: suites.Case{
			Name:        "release_ends_only_the_current_grant",
			Concept:     "release-own-grant",
			Rules:       []string{"R5"},
			Points:      6,
			Explanation: "A release frees the resource at once. A release of a grant that expired, was released already, or was superseded, even one held by a worker of the same name, is refused with ErrLockLost and leaves the current holder holding.",
		},
		Check: checkRelease,
	},
	{
		Case: suites.Case{
			Name:        "first_and_repeated_writes_are_accepted",
			Concept:     "highest-seen",
			Rules:       []string{"R6"},
			Points:      6,
			Explanation: "A key never written accepts any token but zero, the first token 1 and 2^64-1 included; a key accepts its holder writing again with the same token, and any higher token. Read returns the last accepted value, empty values included, with its token, and nothing for a key never written.",
		},
		Check: checkAccepted,
	},
	{
		Case: suites.Case{
			Name:        "lower_token_is_refused",
			Concept:     "stale-refused",
			Rules:       []string{"R7"},
			Points:      6,
			Explanation: "After token 34 was accepted, writes with 33, 1 and 0 are refused with ErrStaleToken and the key keeps 34's value; a zero token is refused on a key never written, too. The refusals move nothing: 34 and 35 are accepted afterwards.",
		},
		Check: checkRefused,
	},
	{
		Case: suites.Case{
			Name:        "skipped_token_does_not_refuse_the_newer_holder",
			Concept:     "highest-seen",
			Rules:       []string{"R6"},
			Points:      8,
			Explanation: "Worker B was granted the lock and crashed before writing, so the store never saw its token. Worker C, granted after B's lease expired, writes with a token that skips B's: it must be accepted. A store that expects exactly the next number refuses the legitimate holder.",
		},
		Check: checkSkippedToken,
	},
	{
		Case: suites.Case{
			Name:        "zombie_write_is_refused",
			Concept:     "zombie-fenced",
			Rules:       []string{"R3", "R4", "R7"},
			Points:      8,
			Explanation: "The classic scenario, end to end on virtual time: worker A holds token 33 and pauses for 30s, past its 10s lease; worker B is granted 34 and writes; A wakes and writes with 33. The store refuses A's write and keeps B's, and A's late release is refused.",
		},
		Check: checkZombie,
	},
	{
		Case: suites.Case{
			Name:        "check_and_write_are_one_step",
			Concept:     "atomic-check-and-write",
			Rules:       []string{"R8"},
			Points:      8,
			Explanation: "Worker A's write with 33 has passed its check and is held inside the KV, before it lands, when worker B writes with 34; then the other way round. Either way the key ends with 34's value: a lower token never lands on top of a higher one. Then three overlapping writes: 10 held in its Put while 33 waits for the key, then 33 held in its Put when 34 arrives: the key ends with 34's (a writer waiting for the key keeps it). Then eight writers, ten rounds under seeded schedules of your store's mutex operations and twenty real races, for the race detector.",
		},
		Check: checkAtomicWrite,
	},
	{
		Case: suites.Case{
			Name:        "keys_have_their_own_highest_token",
			Concept:     "per-key-fencing",
			Rules:       []string{"R9"},
			Points:      4,
			Explanation: "Token 100 on one key does not fence another: a second key accepts token 5 and refuses only what falls below its own highest. Keys that differ in case or spaces, and the empty key, are different keys.",
		},
		Check: checkPerKey,
	},
	{
		Case: suites.Case{
			Name:        "cancelled_context_changes_nothing",
			Concept:     "context-done",
			Rules:       []string{"R10"},
			Points:      4,
			Explanation: "Acquire, Release, Write and Read with a cancelled context, or one past its deadline, return an error wrapping ctx.Err() and change nothing: no grant, no release, no write.",
		},
		Check: checkCancelled,
	},
	{
		Case: suites.Case{
			Name:        "kv_failures_are_returned_and_nothing_is_written_unchecked",
			Concept:     "no-unchecked-write",
			Rules:       []string{"R11"},
			Points:      8,
			Explanation: "The KV under the store fails. A Write whose Get failed returns the KV's error and writes nothing, even for a zombie's token: without the key's token there is no check. A failed Put and a failed Read return the KV's error too, never success or \"nothing written\"; a failed Put accepted nothing, so a later write with a lower token than the failed one, but not lower than what the key holds, is accepted.",
		},
		Check: checkKVFailures,
	},
	{
		Case: suites.Case{
			Name:        "random_call_sequences_follow_the_rules",
			Concept:     "model-sequences",
			Rules:       []string{"R1", "R2", "R3", "R4", "R5", "R6", "R7", "R9", "R10", "R11"},
			Points:      6,
			Explanation: "A hundred generated sequences of calls, each on a new lock service (TTL 10s) and a new store, compared step by step with the rules: Acquire, Release of any grant made so far, Write with granted tokens, tokens next to a key's highest, 0 and 2^64-1, and Read, on resources and keys drawn to collide (the empty name, case, a trailing space, invalid UTF-8 and U+FFFD); the clock moved to a nanosecond before and exactly to each expiry, or by up to three days; cancelled contexts; the KV's Get failing, and its Put failing before or after storing the value. A failing sequence is shortened to the fewest steps that still break a rule, and that is the timeline you see.",
		},
		Model: checkModelSequences,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_calls_are_linearizable",
			Concept:     "atomic-check-and-write",
			Rules:       []string{"R2", "R4", "R5", "R6", "R7", "R8"},
			Points:      4,
			Explanation: "Four clients at once, for real, make five calls each (Write with tokens 0 to 4, Read, and Acquire followed by a Release of what was granted) on two keys and two resources, thirty rounds; whatever the scheduler did, what each call returned must be explainable by the calls taking effect one at a time. A history that no such order explains is shown whole. Whether a race shows up varies from run to run, so this case can only ever fail a program that is wrong; if the check runs out of time it says \"not exercised\".",
		},
		Model: checkModelLinearizable,
	},
}
