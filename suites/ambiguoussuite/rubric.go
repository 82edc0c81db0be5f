package ambiguoussuite

import "github.com/fourth-outcome/labkit/suites"

// Lab is the rubric of lab 03: its concepts and cases.
var Lab = suites.Lab{
	Number:   3,
	Slug:     "ambiguous",
	Title:    "The signing provider and the crash boundary",
	TestName: "TestAmbiguous",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/03-ambiguous.md"

var concepts = []suites.Concept{
	{
		ID:            "fourth-outcome",
		Title:         "An unknown outcome is reconciled, never assumed",
		Misconception: "When a call times out or the worker dies around it, I know what happened: a timeout means it failed, and an attempt that was started means it went out.",
		Hint:          "A timeout or a crash tells you nothing about the provider. Keep the task pending and find out: repeat the Send with the same key, or look the operation up. Record sent or failed only when the provider has said which.",
		Docs:          docs + "#an-unknown-outcome-is-reconciled-never-assumed",
	},
	{
		ID:            "stable-operation-id",
		Title:         "One operation id, written down before the first attempt",
		Misconception: "An idempotency key belongs to a request: each attempt, or each worker process, can make up its own.",
		Hint:          "Create the operation id once per task, save it in the Store before the first Send, and send the saved one as the key on every attempt, in this process and in the next one after a crash.",
		Docs:          docs + "#one-operation-id-written-down-before-the-first-attempt",
	},
	{
		ID:            "one-key-per-operation",
		Title:         "A key names one operation",
		Misconception: "Any value that stays the same across retries, such as the document id or the customer, makes a good idempotency key.",
		Hint:          "Two tasks are two operations, even when they send the same document or go to the same person. The key must differ between tasks and stay the same across the attempts of one task.",
		Docs:          docs + "#a-key-names-one-operation",
	},
	{
		ID:            "record-then-acknowledge",
		Title:         "Record the outcome, then acknowledge",
		Misconception: "Once the provider has the request the task is done, so the order of recording and acknowledging does not matter.",
		Hint:          "The acknowledgement is the point of no return: after it, nobody looks at the task again. Make the outcome durable first, then call Ack. A redelivery that finds a recorded outcome only needs to acknowledge.",
		Docs:          docs + "#record-the-outcome-then-acknowledge",
	},
	{
		ID:            "in-progress-is-undecided",
		Title:         "In progress is neither success nor failure",
		Misconception: "\"In progress\" from the provider means it has my request, so the task counts as sent; or it is a conflict, so the task counts as failed.",
		Hint:          "provider.ErrInProgress carries no receipt and no refusal. Keep the task pending, wait, then ask again with the same key (or leave the delivery unacknowledged for later), until the provider gives a real answer.",
		Docs:          docs + "#in-progress-is-neither-success-nor-failure",
	},
	{
		ID:            "permanent-errors",
		Title:         "A refusal is not retried",
		Misconception: "Any error might go away on the next attempt, so every error deserves a retry.",
		Hint:          "Sort the provider's errors. ErrParameterMismatch, ErrInvalidRequest and ErrUnauthorized fail the same way every time: record the task as failed, acknowledge it and return the error. Do not send again, with the same key or a new one.",
		Docs:          docs + "#a-refusal-is-not-retried",
	},
	{
		ID:            "failing-dependencies",
		Title:         "A failing call is an answer too",
		Misconception: "The store, the queue and the network are reliable enough: an error from one of them can be logged and ignored, and a Load that fails is as good as \"no record\".",
		Hint:          "Every call can fail with an ordinary error. Take each one as a gate for the next step: no Send unless the operation id is saved, no new id unless Load really said \"no record\", no Ack unless the outcome is saved, and return the error (wrapped) instead of nil. The queue brings the task back and the next delivery finishes it.",
		Docs:          docs + "#a-failing-call-is-an-answer-too",
	},
	{
		ID:            "reconcile-after-retention",
		Title:         "After the retention window, look it up by reference",
		Misconception: "The idempotency key protects every retry, however late it comes, and \"not found\" from Status means the request never arrived.",
		Hint:          "The provider forgets a key 24 hours after its commit: then Status says \"not found\" and a Send with the old key is a brand-new request. Send the operation id as the request's Reference too, and before sending again for a pending task, ask Find(reference).",
		Docs:          docs + "#after-the-retention-window-look-it-up-by-reference",
	},
	{
		ID:            "model-sequences",
		Title:         "Every rule holds after any sequence of deliveries, crashes and faults",
		Misconception: "If my worker survives each crash and each fault I thought of, it survives any mix of them, in any order, across tasks and days.",
		Hint:          "Read the timeline from the top: it is the shortest sequence of deliveries found that breaks a rule. At each step, what did the store hold for the task, which key did the worker send, and what did the provider actually commit?",
		Docs:          docs + "#mental-model-one-record-four-crash-points",
	},
}

// tests are the cases, in the order they run.
var tests = []suites.Test[constructor]{
	{
		Case: suites.Case{
			Name:        "sends_once_and_records_the_outcome",
			Concept:     "record-then-acknowledge",
			Rules:       []string{"R1", "R6", "R11", "R12"},
			Points:      6,
			Explanation: "With nothing going wrong, one delivery sends one signing request, records the task as sent with the request id and the operation id it used as the key, acknowledges the delivery and returns nil.",
		},
		Check: checkHappyPath,
	},
	{
		Case: suites.Case{
			Name:        "retries_reuse_the_operation_id",
			Concept:     "stable-operation-id",
			Rules:       []string{"R4", "R8", "R9"},
			Points:      7,
			Explanation: "The provider fails, throttles and fails again before it commits; or it commits, the worker dies, and the redelivery's first lookup is throttled; or it commits and answers a 504 gateway timeout, or the connection breaks with an error nobody can classify, long before the delivery's deadline. Every attempt, in one Process call or across redeliveries, must carry the same idempotency key: the task's operation id, assigned and saved before the first attempt and never replaced. A new key after a timeout makes the retry a second signing request.",
		},
		Check: checkRetriesReuseKey,
	},
	{
		Case: suites.Case{
			Name:        "lost_response_is_not_a_failure",
			Concept:     "fourth-outcome",
			Rules:       []string{"R4", "R8", "R9"},
			Points:      7,
			Explanation: "The provider commits the Send and its answer never arrives: the call times out although the customer has the signing request. The worker must not record the task as failed (or send it again under a new key); it repeats the Send with the same key or looks the operation up, and records the real receipt. And when the provider is down for longer than a delivery's deadline, each Process call gives up for now by its deadline, and a later delivery sends the task.",
		},
		Check: checkLostResponse,
	},
	{
		Case: suites.Case{
			Name:        "crash_before_the_call",
			Concept:     "fourth-outcome",
			Rules:       []string{"R1", "R2", "R3"},
			Points:      6,
			Explanation: "The worker dies at each of its calls before the provider sees the request, and a new process gets the task again. Nothing was sent, so it must be sent now, exactly once: an operation id or a pending record does not mean the request went out.",
		},
		Check: checkCrashBeforeCall,
	},
	{
		Case: suites.Case{
			Name:        "crash_after_commit_before_response",
			Concept:     "stable-operation-id",
			Rules:       []string{"R1", "R2", "R4"},
			Points:      8,
			Explanation: "The provider commits the first Send and the worker dies before the answer arrives: the seed's scenario. The new process must find the operation id the first one saved, and send with it or look it up, so that the customer still receives one signing request, not two.",
		},
		Check: checkCrashAfterCommit,
	},
	{
		Case: suites.Case{
			Name:        "crash_after_response_before_recording",
			Concept:     "stable-operation-id",
			Rules:       []string{"R1", "R2", "R4", "R6"},
			Points:      6,
			Explanation: "The worker receives the receipt and dies at its next call, before it could record anything. The new process knows only what was saved before the Send; with the saved operation id it finds out that the request was sent, and sends nothing more.",
		},
		Check: checkCrashAfterResponse,
	},
	{
		Case: suites.Case{
			Name:        "crash_around_the_acknowledgement",
			Concept:     "record-then-acknowledge",
			Rules:       []string{"R1", "R11", "R13"},
			Points:      6,
			Explanation: "The worker dies after recording the outcome but before acknowledging, while acknowledging, and right after acknowledging. A redelivery must not send again, and once the queue has the acknowledgement the durable record must already say sent: after the ack nobody will ever finish the task.",
		},
		Check: checkCrashAroundAck,
	},
	{
		Case: suites.Case{
			Name:        "each_task_gets_its_own_operation_id",
			Concept:     "one-key-per-operation",
			Rules:       []string{"R5", "R13"},
			Points:      8,
			Explanation: "Three tasks: contract-7 to ann, nda-3 to ann, and contract-7 to bob (a co-signer), then a late duplicate of the first; and two tasks with identical content (a contract signed a second time). Each task is one operation with its own key: a key derived from the document, the customer or the whole content makes the provider treat a different task as a retry of the first, and that task is never sent.",
		},
		Check: checkOwnKeys,
	},
	{
		Case: suites.Case{
			Name:        "in_progress_is_neither_success_nor_failure",
			Concept:     "in-progress-is-undecided",
			Rules:       []string{"R8", "R9"},
			Points:      6,
			Explanation: "The first process dies while its Send is still on its way; the provider takes three minutes to commit it. The redelivered task meets provider.ErrInProgress: the task is neither sent (there is no receipt yet) nor failed (it is about to be sent). The worker must wait and ask again, and record the real receipt.",
		},
		Check: checkInProgress,
	},
	{
		Case: suites.Case{
			Name:        "refusals_are_not_retried",
			Concept:     "permanent-errors",
			Rules:       []string{"R7"},
			Points:      7,
			Explanation: "The provider refuses the request for good: provider.ErrParameterMismatch (the key was already used for a different request), ErrInvalidRequest (the recipient is not an email address) and ErrUnauthorized (an account the provider does not accept). Each answer is the same on every attempt, so the worker sends once, records the task as failed with the reason, acknowledges it and returns an error wrapping the provider's. Retrying, with the same key or a new one, is wrong.",
		},
		Check: checkRefusals,
	},
	{
		Case: suites.Case{
			Name:        "lookup_by_reference_after_retention",
			Concept:     "reconcile-after-retention",
			Rules:       []string{"R10"},
			Points:      7,
			Explanation: "The worker dies around its first Send and the queue brings the task back 25 hours (or 8 days) later, after the provider's 24-hour key retention. The provider has forgotten the key: Status says not found and a Send with the old key creates a second request. The worker must find out with Find(reference) whether the operation was sent, and send only if it was not; a lookup that fails (a broken connection, a 503, or a lookup the provider refuses, which says nothing about the Send it asks about) is no answer: no Send may follow it, and the task is not recorded failed.",
		},
		Check: checkRetention,
	},
	{
		Case: suites.Case{
			Name:        "random_crashes_never_duplicate",
			Concept:     "stable-operation-id",
			Rules:       []string{"R1", "R2"},
			Points:      2,
			Explanation: "Four tasks, with crashes at random calls, calls that fail with an ordinary error or meet a cancelled context while the process lives on, and a provider that fails, throttles, slows down and loses responses at random, all from one seed. Every customer must end with exactly one signing request and every task recorded as sent. The seed replays the run.",
		},
		Check: checkRandomCrashes,
	},
	{
		Case: suites.Case{
			Name:        "failing_calls_are_not_swallowed",
			Concept:     "failing-dependencies",
			Rules:       []string{"R3", "R4", "R11", "R12"},
			Points:      6,
			Explanation: "Each call the worker makes (store.Load, store.Save, Send, Find, Ack), on a first delivery and on a redelivery after a crash, fails once with an ordinary error while the process lives on: before it takes effect, and for Save, Send and Ack also after it took effect. The worker must not send what the store does not name, must not take a failed Load for \"no record\", must not acknowledge an outcome that is not saved, and must return an error rather than nil; the next delivery then finishes the task, with one signing request.",
		},
		Check: checkFailingCalls,
	},
	{
		Case: suites.Case{
			Name:        "cancelled_context_is_no_answer",
			Concept:     "fourth-outcome",
			Rules:       []string{"R8", "R9"},
			Points:      5,
			Explanation: "The delivery's context is cancelled (a graceful shutdown) just before each of the worker's calls, and at the instant the provider commits the Send, while the process lives on; or its deadline comes while the worker waits out a throttle's Retry-After of an hour, and the worker must return then. A Send cut off by the worker's own context says nothing about the provider: the task stays pending and unacknowledged, is never recorded failed, and a later delivery records the real receipt.",
		},
		Check: checkCancelled,
	},
	{
		Case: suites.Case{
			Name:        "settled_task_is_only_acknowledged",
			Concept:     "record-then-acknowledge",
			Rules:       []string{"R13"},
			Points:      5,
			Explanation: "A task that is recorded sent comes back 25 hours and 8 days after it was acknowledged; a task recorded failed comes back an hour and 25 hours later. A delivery of a task whose outcome is recorded only acknowledges it: no Send (after the key's retention a repeated Send is a second signing request, and a refusal is never retried), nil for a sent task and an error for a refused one.",
		},
		Check: checkSettled,
	},
	{
		Case: suites.Case{
			Name:        "random_call_sequences_follow_the_rules",
			Concept:     "model-sequences",
			Rules:       []string{"R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "R13"},
			Points:      8,
			Explanation: "A hundred generated sequences of deliveries, each on a new provider and store, every delivery checked against the rules: four tasks drawn to collide (identical content under ids that differ by a trailing space, in case, in invalid UTF-8 bytes a []rune conversion merges, or in the last byte of a 300-byte id; an invalid recipient and an account the provider does not accept); in a delivery, a drawn call of the worker's (Load, Save, Send, Status, Find or Ack) crashes the process before or after it takes effect, fails with an ordinary error before or after, times out with a 504 or is refused by the provider, or the context is cancelled before it or at the instant the provider commits; the provider fails, throttles, slows down, loses a response or is down for 25 minutes; another client takes the worker's key first; the process restarts between deliveries; the clock moves by hours or days, or to a nanosecond before and exactly to the end of the provider's 24-hour retention. After every delivery: no customer has two signing requests, no two tasks share a key, a sent record names a request the provider made, a failed one a Send the provider refused, a refusal is recorded, acknowledged and returned, no Send follows a failed lookup, a settled task is only acknowledged, and the harness's invariants hold. At the end every task is delivered, with nothing going wrong, until it is settled: each one the provider accepts is sent once, recorded sent and acknowledged. A failing sequence is shortened to the fewest steps that still break a rule, and that is the timeline you see.",
		},
		Model: checkModelSequences,
	},
}
