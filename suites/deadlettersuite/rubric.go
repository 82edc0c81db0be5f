package deadlettersuite

import "github.com/fourth-outcome/labkit/suites"

// Lab is the rubric of lab 07: its concepts and cases.
var Lab = suites.Lab{
	Number:   7,
	Slug:     "deadletter",
	Title:    "Dead-lettering by delivery count",
	TestName: "TestDeadletter",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/07-deadletter.md"

var concepts = []suites.Concept{
	{
		ID:            "count-deliveries",
		Title:         "Count deliveries, not failures",
		Misconception: "A message is bad when its consumers report that it failed, so counting the failures they report is enough.",
		Hint:          "Follow a consumer that crashes: it never calls Nack. Which of your methods still runs for that delivery? Count in Receive, as the delivery is made, never when (or if) the consumer reports back.",
		Docs:          docs + "#count-deliveries-not-failures",
	},
	{
		ID:            "exact-limit",
		Title:         "The limit is exact",
		Misconception: "Whether a message is delivered MaxDeliveries times or one more does not matter, and zero can mean whatever is convenient.",
		Hint:          "Write down, for MaxDeliveries 3, the count of every delivery and when the third one ends: by Nack at once, by expiry at its Expires instant. Then make zero mean the documented default of 5.",
		Docs:          docs + "#the-limit-is-exact",
	},
	{
		ID:            "dead-letter-record",
		Title:         "The dead letter keeps what an operator needs",
		Misconception: "Once a message is parked, only its ID matters; the operator can find out the rest.",
		Hint:          "The dead letter is all the operator gets: the task unchanged, how many deliveries it had, the exact text of the last recorded error (kept through later crashes, which say nothing), the reason. Keep the dead letters in the order they arrived, and hand out copies.",
		Docs:          docs + "#the-dead-letter-keeps-what-an-operator-needs",
	},
	{
		ID:            "validate-early",
		Title:         "Validate, and dead-letter at once",
		Misconception: "A malformed message will fail its way to the dead-letter queue like any other, so there is no need to look at it first.",
		Hint:          "Call the validator on the task before every delivery, inside Receive. A rejection, or a panic in the validator, parks the task at once with the validator's words as its last error, and Receive moves on to the next task.",
		Docs:          docs + "#validate-and-dead-letter-at-once",
	},
	{
		ID:            "redrive-fresh-count",
		Title:         "Redrive starts a fresh count",
		Misconception: "A redriven message is the same message, so it keeps its delivery count and its last error.",
		Hint:          "Redrive is a new start after the operator fixed the cause: put the task at the back of the queue as if just enqueued, with no deliveries and no last error, so that it gets MaxDeliveries fresh deliveries.",
		Docs:          docs + "#redrive-starts-a-fresh-count",
	},
	{
		ID:            "atomic-move",
		Title:         "The move is atomic",
		Misconception: "Taking the message out of one queue and putting it into the other, one step after the other, is a move.",
		Hint:          "Between the two steps the task is in neither queue (a duplicate Enqueue is accepted) or in both (it is delivered, or redriven, while parked). Guard both queues with one lock, or let one goroutine own both, and move the task in one critical section, validator call included.",
		Docs:          docs + "#the-move-is-atomic",
	},
	{
		ID:            "delivery-lease",
		Title:         "A delivery is a lease",
		Misconception: "Once a consumer has received a message, it owns the message until it says otherwise.",
		Hint:          "A delivery holds the task only until its Expires instant: from then on, the receipt is dead for Ack and Nack, whether or not anyone received the task since. Only the current delivery's receipt acknowledges or nacks.",
		Docs:          docs + "#a-delivery-is-a-lease",
	},
	{
		ID:            "queue-contract",
		Title:         "The queue's contract",
		Misconception: "Options, task IDs and contexts are details the caller gets right, so the queue need not check them.",
		Hint:          "Check everything before changing anything: the options in New, the task ID and duplicates in Enqueue, the context at the start of every method. A refused call changes nothing.",
		Docs:          docs + "#the-queues-contract",
	},
	{
		ID:            "model-sequences",
		Title:         "Every rule holds after any sequence of calls",
		Misconception: "If each rule holds in the scenario I thought of, it holds in every order of deliveries, expiries, Nacks, redrives and rejections.",
		Hint:          "Read the timeline from the top: it is the shortest sequence of calls found that breaks a rule. For each task, where does your queue think it is (waiting, being delivered until when, dead-lettered), with which count and last error, and which receipt is current?",
		Docs:          docs + "#mental-model-a-count-that-only-goes-up-and-two-rooms",
	},
}

// tests are the cases, in the order they run.
var tests = []suites.Test[*target]{
	{
		Case: suites.Case{
			Name:        "options_are_checked",
			Concept:     "queue-contract",
			Rules:       []string{"R1"},
			Points:      4,
			Explanation: "New refuses a negative MaxDeliveries and a visibility timeout below zero or above 12 hours; a zero timeout means 30 seconds, and a delivery hides its task for exactly the timeout it was given.",
		},
		Check: checkOptions,
	},
	{
		Case: suites.Case{
			Name:        "default_limit_is_five_deliveries",
			Concept:     "exact-limit",
			Rules:       []string{"R1", "R5"},
			Points:      5,
			Explanation: "With MaxDeliveries zero, the documented default holds: a task is delivered five times, crashed or nacked, and dead-lettered when the fifth delivery ends, never delivered a sixth time, and not dead-lettered after the fourth.",
		},
		Check: checkDefaultLimit,
	},
	{
		Case: suites.Case{
			Name:        "enqueue_checks_task_ids",
			Concept:     "queue-contract",
			Rules:       []string{"R2"},
			Points:      5,
			Explanation: "A task without an ID is refused (an ID of white space is an ID), and so is a task whose ID is queued, being delivered or dead-lettered; an acknowledged task's ID is free again. Tasks come back exactly as they went in, empty fields and multi-byte text included.",
		},
		Check: checkEnqueue,
	},
	{
		Case: suites.Case{
			Name:        "delivery_hides_task_until_its_timeout",
			Concept:     "delivery-lease",
			Rules:       []string{"R3"},
			Points:      6,
			Explanation: "Receive delivers the oldest visible task with a new receipt, the consumer's name and an expiry one visibility timeout away; the task stays hidden until that instant (not a nanosecond less) and then comes back by itself, again days later; a nacked task is visible again at once in its place, still the task enqueued earliest.",
		},
		Check: checkVisibility,
	},
	{
		Case: suites.Case{
			Name:        "count_increases_on_delivery",
			Concept:     "count-deliveries",
			Rules:       []string{"R4"},
			Points:      7,
			Explanation: "Each delivery's count is one more than the last one's, whether that one was nacked or its consumer crashed and its timeout passed. A count kept by failures, or bumped when the consumer reports back, stands still when a consumer crashes.",
		},
		Check: checkCountOnDelivery,
	},
	{
		Case: suites.Case{
			Name:        "crashed_consumer_still_dead_letters",
			Concept:     "count-deliveries",
			Rules:       []string{"R4", "R5", "R6"},
			Points:      7,
			Explanation: "A poison task crashes every consumer that receives it: nobody ever acknowledges or nacks. After MaxDeliveries deliveries it must be in the dead-letter queue anyway, with its count and no error text, and stay there a week later: otherwise it loops, crashing a consumer every visibility timeout, forever.",
		},
		Check: checkCrashedConsumer,
	},
	{
		Case: suites.Case{
			Name:        "limit_is_exact",
			Concept:     "exact-limit",
			Rules:       []string{"R5"},
			Points:      6,
			Explanation: "With MaxDeliveries 3 the third delivery still happens, and the instant it fails the task is dead-lettered; when the last delivery's consumer crashes instead, the task is still hidden a nanosecond before its timeout and dead-lettered at the timeout exactly. MaxDeliveries 1 means one delivery.",
		},
		Check: checkExactLimit,
	},
	{
		Case: suites.Case{
			Name:        "dead_letter_keeps_task_count_and_last_error",
			Concept:     "dead-letter-record",
			Rules:       []string{"R6"},
			Points:      8,
			Explanation: "The dead letter holds the task exactly as enqueued (multi-byte text, empty fields), the number of deliveries, the exact text of the last error a Nack gave (kept through later crashes, which report nothing) and the reason: what an operator needs to decide what to do.",
		},
		Check: checkDeadLetterRecord,
	},
	{
		Case: suites.Case{
			Name:        "malformed_task_dead_lettered_at_once",
			Concept:     "validate-early",
			Rules:       []string{"R7"},
			Points:      8,
			Explanation: "A task the validator rejects, or on which the validator panics, never reaches a consumer: Receive dead-letters it at once (no delivery counted, the validator's words as its last error) and delivers the next task. The validator runs before every delivery, not only the first.",
		},
		Check: checkMalformed,
	},
	{
		Case: suites.Case{
			Name:        "stale_receipts_change_nothing",
			Concept:     "delivery-lease",
			Rules:       []string{"R8"},
			Points:      6,
			Explanation: "Ack removes a task for good. A receipt that is made up, acknowledged, nacked, expired (at its Expires instant exactly, even if nobody received the task since), or the last one of a dead-lettered task, is refused with ErrDeliveryLost and changes nothing, not even the last error or a later delivery; a Nack without a cause is refused too.",
		},
		Check: checkReceipts,
	},
	{
		Case: suites.Case{
			Name:        "dead_letters_listed_in_order",
			Concept:     "dead-letter-record",
			Rules:       []string{"R9"},
			Points:      4,
			Explanation: "List returns the dead letters oldest first, however each got there (malformed, nacked, expired; two expiries noticed by one List in the order they expired), as a copy the caller may change, and still 400 days later.",
		},
		Check: checkListOrder,
	},
	{
		Case: suites.Case{
			Name:        "redrive_resets_the_count",
			Concept:     "redrive-fresh-count",
			Rules:       []string{"R10"},
			Points:      6,
			Explanation: "Redrive puts a dead letter at the back of the queue with no deliveries and no last error, so its next delivery is number 1 and it gets MaxDeliveries fresh ones; a task that is not dead-lettered cannot be redriven, and a malformed one redriven unchanged is caught again.",
		},
		Check: checkRedrive,
	},
	{
		Case: suites.Case{
			Name:        "no_gap_while_validating",
			Concept:     "atomic-move",
			Rules:       []string{"R7", "R11"},
			Points:      5,
			Explanation: "While the validator looks at a task, a producer enqueues the same task again: it must be refused as a duplicate, because the task is in the queue or in the dead-letter queue at every instant, never in neither.",
		},
		Check: checkNoGapWhileValidating,
	},
	{
		Case: suites.Case{
			Name:        "move_is_atomic_under_concurrency",
			Concept:     "atomic-move",
			Rules:       []string{"R11"},
			Points:      5,
			Explanation: "While the Nack of a task's last delivery is moving it to the dead-letter queue (the case holds it still as it reads the cause's text), a producer enqueues the task again and an operator redrives it: the duplicate is refused, and the redrive finds the task either not yet parked or parked once, and brings back one copy. The task is in exactly one queue throughout.",
		},
		Check: checkMoveIsAtomic,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_consumers_and_redrives",
			Concept:     "atomic-move",
			Rules:       []string{"R3", "R4", "R10", "R11"},
			Points:      4,
			Explanation: "Four consumers acknowledge good tasks and nack poison ones while an operator redrives every poison task as soon as List shows it: no task is held by two consumers at once, every count goes up by one (from 1 after the redrive), and in the end every good task was acknowledged once and every poison task is dead-lettered once. Then, for the race detector, Lists and Nacks that nothing of the suite's own orders: a List a virtual second before a Nack, and an operator listing while two consumers park tasks.",
		},
		Check: checkConcurrentWorkload,
	},
	{
		Case: suites.Case{
			Name:        "cancelled_context_changes_nothing",
			Concept:     "queue-contract",
			Rules:       []string{"R12"},
			Points:      4,
			Explanation: "Every method called with a cancelled context, or one past its deadline, returns an error wrapping the context's error and changes nothing: nothing enqueued, delivered, counted, acknowledged, nacked or redriven.",
		},
		Check: checkCancelledContext,
	},
	{
		Case: suites.Case{
			Name:        "random_call_sequences_follow_the_rules",
			Concept:     "model-sequences",
			Rules:       []string{"R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R12"},
			Points:      6,
			Explanation: "Sixty generated sequences of about fifty steps, each on a new queue (MaxDeliveries 0 to 3, a visibility timeout of 30s, 1ns, 10s or 12h, with or without a validator), compared step by step with the rules: Enqueue (IDs drawn to collide: case, a trailing space, invalid UTF-8 and U+FFFD, two encodings of one letter, a NUL, the empty ID; empty and multi-byte fields), Receive, a consumer that receives and then nacks, acknowledges or crashes, Ack and Nack with the current receipt, an earlier one or a made-up one (causes with wrapped, empty and multi-byte text, and none), List (whose copy the caller then changes), Redrive; the validator starting to accept, reject or panic on a task; the clock moved to a nanosecond before and exactly to each delivery's Expires, or by up to 400 days, while consumers say nothing (a lease that expires is a delivery, and the last one dead-letters its task at that instant); cancelled contexts and contexts past their deadline. A failing sequence is shortened to the fewest steps that still break a rule, and that is the timeline you see.",
		},
		Model: checkModelSequences,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_calls_are_linearizable",
			Concept:     "atomic-move",
			Rules:       []string{"R2", "R3", "R4", "R5", "R7", "R8", "R10", "R11"},
			Points:      4,
			Explanation: "Four clients at once, for real, make five calls each (Enqueue of three IDs, one of which the validator rejects; Receive followed by an Ack or a Nack of what was delivered; List; Redrive) on a queue of MaxDeliveries 1 or 2 whose validator and Nack causes yield the processor, thirty rounds; whatever the scheduler did (a Receive may pass over a task another Receive is validating), what each call returned must be explainable by the calls taking effect one at a time. A history that no such order explains is shown whole. Whether a race shows up varies from run to run, so this case can only ever fail a program that is wrong; if the check runs out of time it says \"not exercised\".",
		},
		Model: checkModelLinearizable,
	},
}
