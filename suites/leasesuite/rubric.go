package leasesuite

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites"
)

// Lab is the rubric of lab 05: its concepts and cases.
var Lab = suites.Lab{
	Number:   5,
	Slug:     "lease",
	Title:    "Lease-based checkout with visibility timeouts",
	TestName: "TestLease",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/05-lease.md"

var concepts = []suites.Concept{
	{
		ID:            "one-task-one-entry",
		Title:         "A task is queued once",
		Misconception: "Enqueue can take whatever it is given: an empty ID or a second copy of a queued task does no harm.",
		Hint:          "Refuse a task without an ID, and a task whose ID is still in the queue (queued or leased). Leave the queued one exactly as it was; only an acknowledged task frees its ID.",
		Docs:          docs + "#a-task-is-queued-once",
	},
	{
		ID:            "visibility-timeout",
		Title:         "A lease hides the task for the visibility timeout",
		Misconception: "A leased task belongs to its worker now; when the lease ends, and what Lease hands out first, are details.",
		Hint:          "A lease is a promise with an end: Expires is exactly the visibility timeout after the Lease call (30s when the option is zero). Among visible tasks, hand out the one enqueued first; with none, say ErrNoTask at once.",
		Docs:          docs + "#a-lease-hides-the-task-for-the-visibility-timeout",
	},
	{
		ID:            "expiry-returns-the-task",
		Title:         "An expired lease returns the task by itself",
		Misconception: "When a worker dies, something has to notice and put its task back: a sweeper, a supervisor, a timer per lease.",
		Hint:          "Nobody will call the queue on a dead worker's behalf. Make \"is this task visible?\" a question about the clock: visible when now is not before the lease's expiry. Then the task is back at exactly Expires, with no code running at that moment.",
		Docs:          docs + "#an-expired-lease-returns-the-task-by-itself",
	},
	{
		ID:            "token-per-delivery",
		Title:         "Every delivery gets a new token",
		Misconception: "The task's ID, or one token per task, identifies the lease well enough.",
		Hint:          "The token names one delivery, not the task. A new lease must get a token nobody has held, so that the previous holder's token stops working the moment the task is delivered again.",
		Docs:          docs + "#every-delivery-gets-a-new-token",
	},
	{
		ID:            "renew-from-now",
		Title:         "A renewal counts from now",
		Misconception: "Extending a lease by d means the lease's original deadline (or its current expiry) plus d.",
		Hint:          "Extend is ChangeMessageVisibility: the new expiry is now plus d, whatever the old one was, even when that is sooner.",
		Docs:          docs + "#a-renewal-counts-from-now",
	},
	{
		ID:            "no-resurrection",
		Title:         "An expired lease stays expired",
		Misconception: "If nobody else has taken the task yet, renewing an expired lease is harmless: it just picks up where it left off.",
		Hint:          "Before renewing, check both that the token is the task's current one and that its lease has not ended, exactly as the next Lease would judge it. An expired lease is over even if the task is still sitting there.",
		Docs:          docs + "#an-expired-lease-stays-expired",
	},
	{
		ID:            "holder-only",
		Title:         "Only the current holder settles the task",
		Misconception: "A token that was valid once can still acknowledge its task: the worker did the work, after all.",
		Hint:          "Ack with a token that is not the current, unexpired lease must be refused with ErrLeaseLost and change nothing; otherwise a worker that stalled past its lease deletes the task from under its new holder.",
		Docs:          docs + "#only-the-current-holder-settles-the-task",
	},
	{
		ID:            "release-with-delay",
		Title:         "A release puts the task back, after its delay",
		Misconception: "Nack just means \"not me\": the delay is a hint, and any old token may release the task.",
		Hint:          "Nack by the current holder ends the lease and sets the task's next visible time to now plus the delay. Its token dies with it, and nobody else's token may release the task.",
		Docs:          docs + "#a-release-puts-the-task-back-after-its-delay",
	},
	{
		ID:            "refusals-change-nothing",
		Title:         "A refused call changes nothing",
		Misconception: "Arguments and contexts are the caller's problem: the queue can do what it can with them.",
		Hint:          "Check the ctx and the durations first, and return before touching any state. The exact limits (12h) are allowed, one nanosecond more is not.",
		Docs:          docs + "#a-refused-call-changes-nothing",
	},
	{
		ID:            "atomic-lease",
		Title:         "Two workers never hold one task",
		Misconception: "Finding a visible task and marking it leased can be two steps, as long as each one is locked.",
		Hint:          "The lookup and the grant (and every check-then-change of Ack, Nack and Extend) must be one step that no other call can interleave with: one lock section, one actor, or one atomic operation.",
		Docs:          docs + "#two-workers-never-hold-one-task",
	},
	{
		ID:            "lease-what-you-can-work-on",
		Title:         "Take a task only when you can work on it",
		Misconception: "Prefetching a few extra tasks keeps the worker busy: a buffer of leased tasks costs nothing.",
		Hint:          "A lease's clock runs from the Lease call, not from when you start working. Take a slot first (a semaphore of Capacity), then Lease; give the slot back when the task is settled.",
		Docs:          docs + "#take-a-task-only-when-you-can-work-on-it",
	},
	{
		ID:            "poll-an-empty-queue",
		Title:         "Wait before asking an empty queue again",
		Misconception: "When the queue is empty, asking again at once gets the next task soonest.",
		Hint:          "After ErrNoTask, wait PollInterval (or until ctx ends) before the next Lease. A loop that asks again at once burns the queue's capacity for nothing.",
		Docs:          docs + "#wait-before-asking-an-empty-queue-again",
	},
	{
		ID:            "renew-while-working",
		Title:         "Renew the lease while you work",
		Misconception: "Picking a long enough visibility timeout is enough; renewing is an optimisation.",
		Hint:          "While the handler runs, call Extend for the lease's length well before it ends (half-way is the usual choice), and again after each renewal.",
		Docs:          docs + "#renew-the-lease-while-you-work",
	},
	{
		ID:            "stop-when-lost",
		Title:         "Stop work before the lease ends",
		Misconception: "Once the handler has started, it may as well finish: the lease is the queue's business.",
		Hint:          "Give the handler a ctx you cancel when Extend says ErrLeaseLost, and when a renewal has not succeeded by the lease's Expires. After that the token is dead: do not Ack or Nack it.",
		Docs:          docs + "#stop-work-before-the-lease-ends",
	},
	{
		ID:            "ack-a-durable-outcome",
		Title:         "Acknowledge only a finished task",
		Misconception: "Acknowledging every delivery, or none of the failed ones, keeps the queue tidy either way.",
		Hint:          "Ack exactly the tasks whose handler returned nil; Nack the ones whose handler failed, with opts.Backoff(l.Attempt) as the delay (0 when Backoff is nil), so they come back after their backoff. ErrLeaseLost from either is not the worker's failure.",
		Docs:          docs + "#acknowledge-only-a-finished-task",
	},
	{
		ID:            "queue-errors-stop-the-worker",
		Title:         "A failing queue stops the worker",
		Misconception: "A worker should survive anything: log queue errors and keep going, and on shutdown just drop what it holds.",
		Hint:          "Tell ErrNoTask and ErrLeaseLost (normal) from every other queue error (the queue is broken: stop, cancel the handlers, wait, return it wrapped). On shutdown, wait for the handlers and settle their tasks before returning ctx's error.",
		Docs:          docs + "#a-failing-queue-stops-the-worker",
	},
	{
		ID:            "model-sequences",
		Title:         "Every rule holds after any sequence of calls",
		Misconception: "If each rule holds in the scenario I thought of, it holds in every order of enqueues, leases, renewals, releases, acknowledgements and expiries.",
		Hint:          "Read the timeline from the top: it is the shortest sequence of calls found that breaks a rule. For each task, which delivery does your queue think is current, until when, and how many deliveries has it counted? Which task does it think was enqueued first?",
		Docs:          docs + "#worked-example-a-worker-that-freezes",
	},
}

// check adapts a check on the target to the runner's signature.
func check(f func(t *testing.T, s *target)) func(*testing.T, *suites.History, *target) {
	return func(t *testing.T, _ *suites.History, s *target) { f(t, s) }
}

// tests are the cases, in the order they run.
var tests = []suites.Test[*target]{
	{
		Case: suites.Case{
			Name: "enqueue_refuses_empty_and_duplicate_ids", Concept: "one-task-one-entry", Rules: []string{"R1"}, Points: 4,
			Explanation: "A task without an ID is refused with ErrInvalidTask, and a second Enqueue of an ID that is still queued or leased with ErrDuplicateTask, leaving the first copy as it was; once acknowledged, the ID may be queued again, as a new task whose first delivery is attempt 1. Two copies of one task would be worked on twice.",
		},
		Check: check(checkEnqueue),
	},
	{
		Case: suites.Case{
			Name: "lease_hands_out_the_oldest_visible_task", Concept: "visibility-timeout", Rules: []string{"R2"}, Points: 4,
			Explanation: "Lease returns at once: ErrNoTask on an empty or fully leased queue, otherwise the visible task enqueued first, leased to the caller, attempt 1, with a token and an expiry exactly one visibility timeout after the call.",
		},
		Check: check(checkLease),
	},
	{
		Case: suites.Case{
			Name: "zero_visibility_timeout_means_30s", Concept: "visibility-timeout", Rules: []string{"R2", "R3"}, Points: 4,
			Explanation: "Options with VisibilityTimeout 0 mean the default, 30s: the lease expires 30s after the Lease call, the task is invisible a nanosecond before and visible at 30s.",
		},
		Check: check(checkDefaultVisibility),
	},
	{
		Case: suites.Case{
			Name: "leased_task_is_invisible_until_its_lease_ends", Concept: "expiry-returns-the-task", Rules: []string{"R3"}, Points: 4,
			Explanation: "A task leased at t=7s with a 1m visibility timeout is invisible until t=1m7s minus a nanosecond and visible again at exactly t=1m7s, with nothing calling the queue on the dead worker's behalf; three days later it is still there for the next worker. The lease is what brings a dead worker's task back.",
		},
		Check: check(checkInvisibleUntilExpiry),
	},
	{
		Case: suites.Case{
			Name: "every_delivery_gets_a_new_token", Concept: "token-per-delivery", Rules: []string{"R4"}, Points: 5,
			Explanation: "Each delivery, after an expiry or a release, gets a token never issued before, and Attempt counts 1, 2, 3; an earlier delivery's token no longer acknowledges anything; a task queued again after its Ack gets a token never issued before, not its first incarnation's; tokens of different tasks differ too, whatever their IDs (x1's first delivery and x's eleventh). A token shared by deliveries lets a zombie settle its successor's work.",
		},
		Check: check(checkNewTokenPerDelivery),
	},
	{
		Case: suites.Case{
			Name: "renewal_counts_from_now", Concept: "renew-from-now", Rules: []string{"R5"}, Points: 4,
			Explanation: "Extend(token, 30s) at t=20s makes the lease end at t=50s: not at t=30s (from the receive time) nor at t=1m0s (after the old expiry); a 5s renewal can shorten a lease; renewals every 11h keep a lease alive for three days.",
		},
		Check: check(checkRenewFromNow),
	},
	{
		Case: suites.Case{
			Name: "expired_lease_cannot_be_renewed", Concept: "no-resurrection", Rules: []string{"R5"}, Points: 5,
			Explanation: "A renewal a nanosecond before the lease ends succeeds; one at the instant it ends, or two days later, is refused with ErrLeaseLost even though nobody has leased the task since, and the task stays visible. A resurrected lease hides a task nobody is working on, or one a second worker is about to take.",
		},
		Check: check(checkNoResurrection),
	},
	{
		Case: suites.Case{
			Name: "only_the_current_holder_renews", Concept: "no-resurrection", Rules: []string{"R5"}, Points: 4,
			Explanation: "After w1's lease expired and w2 leased the task, w1's Extend is refused with ErrLeaseLost and w2's lease still ends when it did.",
		},
		Check: check(checkOnlyHolderRenews),
	},
	{
		Case: suites.Case{
			Name: "only_the_current_holder_acks", Concept: "holder-only", Rules: []string{"R6"}, Points: 4,
			Explanation: "An Ack from the previous holder, an expired lease, a second Ack or an empty token is refused with ErrLeaseLost and leaves the task as it was; the current holder's Ack removes the task for good, even three days later.",
		},
		Check: check(checkOnlyHolderAcks),
	},
	{
		Case: suites.Case{
			Name: "ack_racing_expiry", Concept: "holder-only", Rules: []string{"R3", "R6", "R9"}, Points: 4,
			Explanation: "An Ack a nanosecond before the lease ends removes the task for good; an Ack at the very instant it ends is refused and the task is delivered again. Either the acknowledgement or the redelivery wins, never both.",
		},
		Check: check(checkAckAtExpiry),
	},
	{
		Case: suites.Case{
			Name: "nack_releases_after_its_delay", Concept: "release-with-delay", Rules: []string{"R7"}, Points: 3,
			Explanation: "Nack(token, 0) makes the task visible at once, Nack(token, 10m) exactly 10 minutes later, even with more of the lease left, and Nack(token, 3h) 3 hours later, even with less of it left; a released token is dead, also while its delay runs, and a Nack by a previous or expired holder is refused with ErrLeaseLost and releases nothing.",
		},
		Check: check(checkNack),
	},
	{
		Case: suites.Case{
			Name: "durations_outside_the_limits_are_refused", Concept: "refusals-change-nothing", Rules: []string{"R8"}, Points: 4,
			Explanation: "A visibility timeout, renewal or delay below its minimum or a nanosecond over 12h is refused with ErrInvalidDuration and changes nothing; exactly 12h is accepted and honoured.",
		},
		Check: check(checkDurationLimits),
	},
	{
		Case: suites.Case{
			Name: "cancelled_context_changes_nothing", Concept: "refusals-change-nothing", Rules: []string{"R10"}, Points: 3,
			Explanation: "Enqueue, Lease, Extend, Ack and Nack with a cancelled ctx return an error wrapping context.Canceled and change nothing (Lease on a queue with nothing visible too, not ErrNoTask): nothing is queued, leased, renewed, removed or released.",
		},
		Check: check(checkCancelledContext),
	},
	{
		Case: suites.Case{
			Name: "concurrent_leases_never_share_a_task", Concept: "atomic-lease", Rules: []string{"R9"}, Points: 3,
			Explanation: "Eight workers lease forty tasks concurrently: each task goes to exactly one worker, with its own token. Then, thirty times, eight workers race for the only visible task, their lock operations interleaved by the suite in an order drawn from the case's seed (graded by labctl; under plain go test they race freely): exactly one may win each race. Two winners means two workers doing one task.",
		},
		Check: check(checkConcurrentLeases),
	},
	{
		Case: suites.Case{
			Name: "concurrent_acks_settle_once", Concept: "atomic-lease", Rules: []string{"R9", "R6", "R7"}, Points: 4,
			Explanation: "Eight concurrent Acks of one lease, ten times with their lock operations interleaved by the suite from the case's seed (graded by labctl) and once freely: exactly one succeeds. Concurrent Acks and Nacks of one lease: exactly one succeeds, and the task is gone or back accordingly. Renewals racing an Ack do not stop it.",
		},
		Check: check(checkConcurrentSettles),
	},
	{
		Case: suites.Case{
			Name: "worker_leases_only_what_it_can_work_on", Concept: "lease-what-you-can-work-on", Rules: []string{"R11"}, Points: 6,
			Explanation: "A worker with Capacity 3 and five visible tasks holds exactly three leases and runs three handlers; when one returns it takes the next task at once. With Capacity 0, or -1, it works on one at a time. While its Ack of a finished task is unanswered it still holds that lease and leases nothing more. A lease taken beyond capacity expires in a local buffer, and another worker does the task too.",
		},
		Check: check(checkWorkerCapacity),
	},
	{
		Case: suites.Case{
			Name: "worker_waits_between_empty_polls", Concept: "poll-an-empty-queue", Rules: []string{"R12"}, Points: 3,
			Explanation: "On an empty queue the worker calls Lease at most every PollInterval (10s; 1s when it is zero or negative), keeps calling, and takes a task queued later within one interval.",
		},
		Check: check(checkWorkerPolls),
	},
	{
		Case: suites.Case{
			Name: "worker_renews_long_work", Concept: "renew-while-working", Rules: []string{"R13"}, Points: 5,
			Explanation: "A handler works for an hour on a task with a 45s visibility timeout: the worker renews the lease for 45s each time (the length the queue granted, not the default 30s), at the latest when half the lease's length has passed, so that a slow or failed renewal still has time before the lease ends, and the task is never delivered to anyone else and the Ack at the end is accepted.",
		},
		Check: check(checkWorkerRenews),
	},
	{
		Case: suites.Case{
			Name: "worker_stops_when_its_lease_is_lost", Concept: "stop-when-lost", Rules: []string{"R14"}, Points: 5,
			Explanation: "When Extend says ErrLeaseLost, the handler's ctx is cancelled at that instant; when Extend stalls, at the latest when the lease ends. The worker neither acks nor nacks the lost token, waits for the cancelled handler to return (until then it still counts against Capacity), and goes on with its next task. Work that continues after the lease is lost runs twice.",
		},
		Check: check(checkWorkerStopsWhenLost),
	},
	{
		Case: suites.Case{
			Name: "worker_acks_success_and_releases_failure", Concept: "ack-a-durable-outcome", Rules: []string{"R15"}, Points: 5,
			Explanation: "A handler that returns nil gets one Ack; one that fails gets one Nack and no Ack: with delay 0 when WorkerOptions.Backoff is nil, and the task comes back at once; with Backoff(attempt) for the attempt that failed otherwise (10s, 25s and 5s for attempts 1, 2 and 3), where attempt is the lease's Attempt, which counts deliveries to other workers too, and the task comes back only then. ErrLeaseLost from Ack or from Nack does not stop the worker. A failed task released at once, against a dependency that is down, fails again as fast as the workers can go.",
		},
		Check: check(checkWorkerSettles),
	},
	{
		Case: suites.Case{
			Name: "worker_stops_on_queue_errors", Concept: "queue-errors-stop-the-worker", Rules: []string{"R16"}, Points: 4,
			Explanation: "When the queue's Lease, Extend or Ack fails with an error other than ErrNoTask and ErrLeaseLost, Run cancels its handlers, waits for them and returns an error wrapping the queue's, without acknowledging a task whose handler did not finish; a failing Nack stops it too. An error swallowed is a worker that looks healthy and does nothing.",
		},
		Check: check(checkWorkerQueueFailure),
	},
	{
		Case: suites.Case{
			Name: "worker_shuts_down_cleanly", Concept: "queue-errors-stop-the-worker", Rules: []string{"R16", "R15"}, Points: 3,
			Explanation: "When Run's ctx is cancelled it leases nothing more, cancels its handlers, waits for them (a handler that winds down slowly included), acknowledges what finished and releases what did not, and returns an error wrapping context.Canceled; an idle worker returns at once, not at its next poll, and one whose renewal is unanswered returns at once and releases its task; started with a cancelled ctx it leases nothing.",
		},
		Check: check(checkWorkerShutdown),
	},
	{
		Case: suites.Case{
			Name:        "random_call_sequences_follow_the_rules",
			Concept:     "model-sequences",
			Rules:       []string{"R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R10"},
			Points:      6,
			Explanation: "A hundred generated sequences of calls, each on a new queue (visibility timeout 0, 10s or 12h, sometimes after a refused one), compared step by step with the rules: Enqueue of IDs drawn to collide (the empty ID, case, a trailing space, invalid UTF-8 and U+FFFD, two encodings of one letter, a NUL) with two documents, Lease by three workers, Extend, Ack and Nack with any token issued so far, the empty one or one never issued, renewals and delays on both sides of their limits (0, 12h, 12h plus a nanosecond, negative), cancelled contexts, and the clock moved to a nanosecond before, exactly at and a nanosecond after every lease's expiry and every release's delay, or by up to an hour. A failing sequence is shortened to the fewest steps that still break a rule, and that is the timeline you see.",
		},
		Model: checkModelSequences,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_calls_are_linearizable",
			Concept:     "atomic-lease",
			Rules:       []string{"R1", "R2", "R4", "R5", "R6", "R7", "R9"},
			Points:      4,
			Explanation: "Four workers at once, for real, make five calls each (Enqueue of two IDs, Lease, and Ack, Nack and Extend with their own latest token or the latest any of them got), thirty rounds, each on a new queue, every other one with their lock operations interleaved by the suite from the case's seed (graded by labctl; under plain go test they race freely); whatever the scheduler did, what each call returned must be explainable by the calls taking effect one at a time. A history that no such order explains is shown whole. Whether a race shows up varies from run to run, so this case can only ever fail a queue that is wrong; if the check runs out of time it says \"not exercised\".",
		},
		Model: checkModelLinearizable,
	},
}
