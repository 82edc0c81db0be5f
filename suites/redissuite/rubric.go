package redissuite

import "github.com/fourth-outcome/labkit/suites"

// Lab is the rubric of lab 02: its concepts and cases.
var Lab = suites.Lab{
	Number:   2,
	Slug:     "redis",
	Title:    "A durable claim store on Redis SET NX",
	TestName: "TestRedis",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/02-redis.md"

var concepts = []suites.Concept{
	{
		ID:            "model-sequences",
		Title:         "Every rule holds after any sequence of calls and failures",
		Misconception: "If each rule holds in the scenario I thought of, it holds after any mix of calls, expiries, restarts and Redis failures.",
		Hint:          "Read the timeline from the top: it is the shortest sequence found that breaks a rule. For each step, ask which Redis key your store used, what the record held, and whether the step's command took effect.",
		Docs:          docs + "#mental-model-what-a-key-can-be-and-who-may-change-it",
	},
	{
		ID:            "durable-claim",
		Title:         "The claim lives in Redis, not in the process",
		Misconception: "Keeping claims in the process is fine as long as the results end up in Redis.",
		Hint:          "Restart the process in your head: a new Store on the same server must see every pending and completed record. Anything only in a Go variable is gone.",
		Docs:          docs + "#the-claim-lives-in-redis-not-in-the-process",
	},
	{
		ID:            "atomic-claim",
		Title:         "SET NX is the claim",
		Misconception: "Reading the key first and writing it when it is absent is as good as an atomic claim, because Redis runs each command atomically.",
		Hint:          "Each command is atomic; the gap between two commands is not. Let Redis decide who was first: one SET with NX either creates the key or tells you it exists.",
		Docs:          docs + "#set-nx-is-the-claim",
	},
	{
		ID:            "claim-expiry-atomic",
		Title:         "Claim and expiry are one command",
		Misconception: "Setting the key and then its expiry right after is the same as setting both at once; nothing can happen in between.",
		Hint:          "A process can die between any two commands. Find the command after which a crash leaves a key with no TTL, and fold the expiry into the claim itself (SET with NX and PX).",
		Docs:          docs + "#claim-and-expiry-are-one-command",
	},
	{
		ID:            "claim-expiry",
		Title:         "An abandoned claim expires",
		Misconception: "A claim stays until its owner completes or releases it; owners always come back.",
		Hint:          "Owners crash, get killed during deploys, lose their network. Give the pending claim its own, short TTL (Options.ClaimTTL) so the key frees itself.",
		Docs:          docs + "#an-abandoned-claim-expires",
	},
	{
		ID:            "retention-window",
		Title:         "Results are kept for the retention window",
		Misconception: "Once the work is done the record can go, or keep the claim's short TTL; duplicates only come while the work runs.",
		Hint:          "Late retries are the common case. When you complete, store the result with its own TTL of Options.Retention, and never delete a completed record.",
		Docs:          docs + "#results-are-kept-for-the-retention-window",
	},
	{
		ID:            "owner-token",
		Title:         "Only the token holder may release or complete",
		Misconception: "The key is mine because I claimed it, so I can delete or overwrite it when I am done.",
		Hint:          "Your claim may have expired and been taken by someone else while you worked. Give every claim a unique token, store it in the value, and act only if the stored token is still yours.",
		Docs:          docs + "#only-the-token-holder-may-release-or-complete",
	},
	{
		ID:            "atomic-compare-and-act",
		Title:         "Compare and act in one step",
		Misconception: "Checking the token with GET and then deleting or writing is safe, because I only act when the token matched.",
		Hint:          "The key can expire and be re-claimed between your GET and your DEL. The comparison and the change must run on the server as one step: a Lua script (EVAL) is the usual tool.",
		Docs:          docs + "#compare-and-act-in-one-step",
	},
	{
		ID:            "tenant-scope",
		Title:         "Keys belong to the tenant",
		Misconception: "Idempotency keys are random enough that two customers will never use the same one.",
		Hint:          "Keys come from clients and clients reuse simple ones (order-1, a retry counter). Put the authenticated tenant into the Redis key so one tenant can neither see nor replay another's result.",
		Docs:          docs + "#keys-belong-to-the-tenant",
	},
	{
		ID:            "unambiguous-key",
		Title:         "Tenant and key are joined without ambiguity",
		Misconception: "Joining tenant and key with a separator such as \":\" keeps them apart.",
		Hint:          "If the separator may appear inside the tenant or the key, two different pairs produce the same string. Encode the pair so it can be split back uniquely: a length prefix, or escaping.",
		Docs:          docs + "#tenant-and-key-are-joined-without-ambiguity",
	},
	{
		ID:            "fingerprint",
		Title:         "One key, one request",
		Misconception: "The idempotency key alone identifies the request; whatever else comes with it does not matter.",
		Hint:          "Store the request's fingerprint with the claim and compare it on every duplicate. A different fingerprint under the same key is a client bug: reject it with your mismatch error, and run nothing.",
		Docs:          docs + "#one-key-one-request",
	},
	{
		ID:            "input-validation",
		Title:         "Bad input is an error, not a key",
		Misconception: "Redis accepts any bytes as a key, so the store does not need to check the tenant and key.",
		Hint:          "Reject an empty tenant or key, a NUL byte and anything longer than the documented limit before you talk to Redis, with an error that wraps your invalid-key sentinel.",
		Docs:          docs + "#bad-input-is-an-error-not-a-key",
	},
	{
		ID:            "option-defaults",
		Title:         "Zero means the default",
		Misconception: "An option left at zero is the caller's business: a zero TTL passed to Redis will do something sensible.",
		Hint:          "Apply each documented default in New, one by one, before anything uses the options. A zero expiry sent to Redis means no expiry at all (or an error), never the default.",
		Docs:          docs + "#zero-means-the-default",
	},
	{
		ID:            "exact-results",
		Title:         "Results come back byte for byte",
		Misconception: "Results are short, tidy strings: an empty one means \"no result yet\", and a separator character in the record can never appear inside them.",
		Hint:          "Keep the state apart from the result (an empty result is a result), and encode the record so that any bytes in the result or the fingerprint read back exactly: length prefixes, a hash, or JSON.",
		Docs:          docs + "#results-come-back-byte-for-byte",
	},
	{
		ID:            "settle-once",
		Title:         "A claim is settled once",
		Misconception: "Complete and Release only need to check the token: the token is mine, so whatever the record holds is mine to change.",
		Hint:          "The completed record still carries your token. Act only on the pending record of this claim: a claim that expired, was released or was completed is settled, and a second Complete or Release must change nothing and say the claim is lost.",
		Docs:          docs + "#a-claim-is-settled-once",
	},
	{
		ID:            "whole-outcome",
		Title:         "Do reports the whole outcome",
		Misconception: "When the bookkeeping after the work fails, the caller only needs one error, and the value no longer matters.",
		Hint:          "The work ran: return its value even when Complete failed, with Complete's error. When the work failed and Release failed too, join both errors (errors.Join) so the caller can match either.",
		Docs:          docs + "#do-reports-the-whole-outcome",
	},
	{
		ID:            "fail-fast",
		Title:         "A lost server is an error, not a hang",
		Misconception: "If Redis is briefly unreachable, the store should keep retrying until it answers.",
		Hint:          "Return the error, wrapped with what you were doing, and let the caller decide about retries. Never loop on connection errors inside the store, and never report success for a write that failed.",
		Docs:          docs + "#a-lost-server-is-an-error-not-a-hang",
	},
}

// tests are the cases, in the order they run.
var tests = []suites.Test[*env]{
	{
		Case: suites.Case{
			Name:        "claim_survives_restart",
			Concept:     "durable-claim",
			Rules:       []string{"R1"},
			Points:      5,
			Explanation: "A worker completes one key and claims another, then its process dies. A new process (a new store on a new connection to the same server) must replay the completed result and see the pending claim as in progress. That is the whole point of moving the store to Redis.",
		},
		Check: checkRestart,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_clients_execute_once",
			Concept:     "atomic-claim",
			Rules:       []string{"R2"},
			Points:      6,
			Explanation: "Five processes, each with its own connection, submit the same key in lockstep: each sends its next command only when all the others have sent theirs. Exactly one may run the work; the others must be told in progress. Only a single atomic command (SET NX) decides the race.",
		},
		Check: checkConcurrentClients,
	},
	{
		Case: suites.Case{
			Name:        "claim_and_expiry_are_one_command",
			Concept:     "claim-expiry-atomic",
			Rules:       []string{"R3"},
			Points:      6,
			Explanation: "The worker's process crashes after its 1st command, then after its 2nd, and so on. After every crash, every key the store wrote must carry a TTL; a claim without one is locked forever, because its owner will never come back to release it.",
		},
		Check: checkCrashBetweenCommands,
	},
	{
		Case: suites.Case{
			Name:        "abandoned_claim_expires",
			Concept:     "claim-expiry",
			Rules:       []string{"R4"},
			Points:      5,
			Explanation: "A worker claims a key and dies without completing or releasing it. Just before ClaimTTL has passed, a duplicate is still told in progress; just after (to the millisecond), the key is free and the next attempt runs the work, under a claim the store really wrote.",
		},
		Check: checkAbandonedClaim,
	},
	{
		Case: suites.Case{
			Name:        "retention_window_honoured",
			Concept:     "retention-window",
			Rules:       []string{"R5", "R1"},
			Points:      5,
			Explanation: "A completed result is replayed to a duplicate that arrives just before the retention window ends, and the key is free again just after it, for every process, the one that stored it too. Deleting the record on success, or letting it expire with the short claim TTL, lets a late retry run the work twice.",
		},
		Check: checkRetention,
	},
	{
		Case: suites.Case{
			Name:        "stale_owner_cannot_release_new_claim",
			Concept:     "owner-token",
			Rules:       []string{"R9"},
			Points:      4,
			Explanation: "Worker A's claim expires while it is stalled and worker B claims the key. When A wakes up and releases, B's claim must survive (A gets a claim-lost error); otherwise a third worker runs the work while B is still running it.",
		},
		Check: checkStaleRelease,
	},
	{
		Case: suites.Case{
			Name:        "stale_owner_cannot_complete_over_new_claim",
			Concept:     "owner-token",
			Rules:       []string{"R8"},
			Points:      4,
			Explanation: "Worker A's claim expires while it is stalled and worker B claims the key. When A wakes up and completes, it must not overwrite B's claim with its result (A gets a claim-lost error); B's own result is the one that is stored and replayed.",
		},
		Check: checkStaleComplete,
	},
	{
		Case: suites.Case{
			Name:        "compare_and_act_is_one_step",
			Concept:     "atomic-compare-and-act",
			Rules:       []string{"R10"},
			Points:      6,
			Explanation: "Worker A releases (and, in a second round, completes) its claim, and the suite stalls A's connection between two of its commands while the claim expires and worker B takes the key. A must still not delete or overwrite B's claim: checking the token and acting on it has to be one step on the server.",
		},
		Check: checkCompareAndActAtomic,
	},
	{
		Case: suites.Case{
			Name:        "tenants_do_not_share_keys",
			Concept:     "tenant-scope",
			Rules:       []string{"R11"},
			Points:      4,
			Explanation: "Two tenants use the same idempotency key for the same kind of request. Each must run its own work and get its own result; one tenant must never be replayed another's result, nor be blocked by another's pending claim.",
		},
		Check: checkTenantScope,
	},
	{
		Case: suites.Case{
			Name:        "tenant_and_key_join_unambiguously",
			Concept:     "unambiguous-key",
			Rules:       []string{"R12"},
			Points:      4,
			Explanation: "Different (tenant, key) pairs must map to different Redis keys, also when a tenant or key contains a separator character: (\"ab\", \"c\") is not (\"a\", \"bc\"), (\"t:x\", \"k\") is not (\"t\", \"x:k\"), and (\"a\\\", \"b:c\") is not (\"a:b\\\", \"c\").",
		},
		Check: checkUnambiguousKey,
	},
	{
		Case: suites.Case{
			Name:        "reused_key_with_other_request_is_rejected",
			Concept:     "fingerprint",
			Rules:       []string{"R13"},
			Points:      4,
			Explanation: "A client reuses an idempotency key for a different request (another fingerprint). The store must reject it with the lab's mismatch error, run nothing and leave the original record alone, whether the first request is still pending or already completed.",
		},
		Check: checkFingerprint,
	},
	{
		Case: suites.Case{
			Name:        "invalid_input_is_rejected",
			Concept:     "input-validation",
			Rules:       []string{"R14"},
			Points:      4,
			Explanation: "An empty tenant or key, a NUL byte or a 10 KB key must be rejected with an error wrapping the lab's invalid-key sentinel, before anything is written and without running the work; never a silent success, never a panic.",
		},
		Check: checkInvalidInput,
	},
	{
		Case: suites.Case{
			Name:        "lost_server_is_an_error_not_a_hang",
			Concept:     "fail-fast",
			Rules:       []string{"R16", "R15"},
			Points:      4,
			Explanation: "The Redis server goes away after a worker has claimed a key. Completing, and starting new work, must promptly return an error: no hang, no silent success for a result that was never stored (the work's value still comes back, with the error), and no work run without a claim.",
		},
		Check: checkLostServer,
	},
	{
		Case: suites.Case{
			Name:        "limits_count_bytes_inclusive",
			Concept:     "input-validation",
			Rules:       []string{"R14"},
			Points:      3,
			Explanation: "A tenant of exactly 128 bytes and a key of exactly 256 bytes are valid, also when they are made of two- and four-byte characters; one byte more is rejected with the invalid-key error, also when the text has far fewer characters than bytes.",
		},
		Check: checkLimits,
	},
	{
		Case: suites.Case{
			Name:        "zero_options_mean_defaults",
			Concept:     "option-defaults",
			Rules:       []string{"R6"},
			Points:      3,
			Explanation: "A store built with ClaimTTL 0 keeps its claims for DefaultClaimTTL (a minute), and one built with Retention 0 keeps its results for DefaultRetention (24 hours), each default on its own. A zero sent to Redis as an expiry would mean a claim that never expires.",
		},
		Check: checkDefaults,
	},
	{
		Case: suites.Case{
			Name:        "results_replayed_byte_for_byte",
			Concept:     "exact-results",
			Rules:       []string{"R7", "R13"},
			Points:      4,
			Explanation: "Results and fingerprints that are empty, hold the separators a record might use (| : space newline quote), NUL bytes, non-ASCII text, bytes that are not valid UTF-8 (which a JSON string turns into U+FFFD) or 64 KB come back exactly, to another process and to five readers at once, and the work never runs again.",
		},
		Check: checkResultsVerbatim,
	},
	{
		Case: suites.Case{
			Name:        "do_returns_what_it_could_not_store",
			Concept:     "whole-outcome",
			Rules:       []string{"R15"},
			Points:      4,
			Explanation: "The work outlives its claim, or Redis fails the command that settles it. Do still returns the work's value with Complete's error, and a work error joined with Release's error, so the caller learns both what happened and what could not be recorded.",
		},
		Check: checkDoReports,
	},
	{
		Case: suites.Case{
			Name:        "expired_claim_is_lost",
			Concept:     "owner-token",
			Rules:       []string{"R8", "R9"},
			Points:      4,
			Explanation: "A claim expires and nobody takes the key (just after ClaimTTL, and three days later). Complete and Release, in either order, get the claim-lost error and write nothing back: a completed record re-created from a lost claim would replay a result no claim protected.",
		},
		Check: checkExpiredClaimIsLost,
	},
	{
		Case: suites.Case{
			Name:        "settled_claim_stays_settled",
			Concept:     "settle-once",
			Rules:       []string{"R8", "R9"},
			Points:      4,
			Explanation: "A claim that was completed or released is settled: releasing or completing it again (a deferred cleanup, a redelivered message) gets the claim-lost error and changes nothing, and when two calls settle one claim at the same moment exactly one of them wins.",
		},
		Check: checkSettledStaysSettled,
	},
	{
		Case: suites.Case{
			Name:        "redis_errors_are_reported",
			Concept:     "fail-fast",
			Rules:       []string{"R16"},
			Points:      3,
			Explanation: "Redis fails one command of Claim, Complete, Release or Do, each in turn. The store returns an error wrapping the Redis error, never disguised as in progress, claim lost or a mismatch, and never runs work without a claim; a caller whose context is already cancelled gets that error.",
		},
		Check: checkRedisErrors,
	},
	{
		Case: suites.Case{
			Name:        "random_call_sequences_follow_the_rules",
			Concept:     "model-sequences",
			Rules:       []string{"R1", "R2", "R4", "R5", "R6", "R7", "R8", "R9", "R11", "R12", "R13", "R14", "R15", "R16"},
			Points:      10,
			Explanation: "Generated sequences of calls from two processes, each sequence on a new Redis, compared step by step with the rules: Do, Claim, Complete and Release; tenants and keys drawn to collide (joined without a separator, with a ':' or an escape, invalid UTF-8, at and past the byte limits, with a NUL); fingerprints and results that are empty, invalid UTF-8, full of separators or 72 KB; Options with TTLs that are not whole seconds, or zero (the defaults); the clock moved to just before and just after every claim's and result's expiry; work that outlives its claim; a cancelled context; Redis failing a command before it takes effect, and after (its reply lost); a process restarted; SCRIPT FLUSH. A failing sequence is shortened to the fewest steps that still break a rule, and that is the timeline you see.",
		},
		Model: checkModelSequences,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_calls_are_linearizable",
			Concept:     "atomic-claim",
			Rules:       []string{"R2", "R8", "R15"},
			Points:      4,
			Explanation: "Three processes call Do at once, for real, three times each on two keys, round after round; whatever the scheduler did, what each call returned must be explainable by the calls taking effect one at a time (the claim between Do's call and the work's start, the completion or release between the work's return and Do's return). A history that no such order explains is shown whole. Whether a race shows up varies from run to run, so this case can only ever fail a store that is wrong.",
		},
		Model: checkModelLinearizable,
	},
}
