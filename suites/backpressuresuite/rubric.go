package backpressuresuite

import "github.com/fourth-outcome/labkit/suites"

// Lab is the rubric of lab 09: its concepts and cases.
var Lab = suites.Lab{
	Number:   9,
	Slug:     "backpressure",
	Title:    "Bounded admission and backlog math",
	TestName: "TestBackpressure",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/09-backpressure.md"

var concepts = []suites.Concept{
	{
		ID:            "bounded-queue",
		Title:         "A queue absorbs bursts, not a rate mismatch",
		Misconception: "A queue that can always take one more job never loses work, so its bound can be generous, approximate, or left out.",
		Hint:          "Count the places: waiting jobs plus the places reserved by Submits still claiming their keys. When they reach Capacity, refuse the next job at once with an error wrapping ErrQueueFull, and never make room by dropping a job you admitted. Allocate the buffer once, at New.",
		Docs:          docs + "#a-queue-absorbs-bursts-not-a-rate-mismatch",
	},
	{
		ID:            "deadline-wait",
		Title:         "Block only until a deadline",
		Misconception: "A producer that waits for room will get it eventually, so waiting without a deadline is a safe way to slow it down.",
		Hint:          "Wait in a select on three things: a place being freed, a timer of MaxWait, and ctx.Done(). Whichever comes first ends the wait; with MaxWait zero, do not wait at all. Hold no lock and no place while you wait.",
		Docs:          docs + "#block-only-until-a-deadline",
	},
	{
		ID:            "admit-before-claim",
		Title:         "Admit before you claim",
		Misconception: "Claiming the idempotency key first is harmless: if the queue then refuses the job, the client will retry anyway.",
		Hint:          "The client's retry carries the same key: if a refused job claimed it, the retry is taken for a duplicate and the work never runs. Reserve the job's place first, then claim the key without holding the lock, and give the place back if the claim fails.",
		Docs:          docs + "#admit-before-you-claim",
	},
	{
		ID:            "tenant-isolation",
		Title:         "A noisy tenant gets a bounded share",
		Misconception: "One global bound protects everyone: whoever submits first is served first, and that is fair.",
		Hint:          "Count each tenant's waiting jobs and refuse a tenant at its limit with ErrTenantFull while the others still get in. Free the tenant's place when its job is taken, and never let a tenant waiting for its own room hold up another tenant's Submit.",
		Docs:          docs + "#a-noisy-tenant-gets-a-bounded-share",
	},
	{
		ID:            "queue-age",
		Title:         "Queue age over depth",
		Misconception: "The queue's depth says how far behind it is, so depth is the number to report and alert on.",
		Hint:          "Keep each job's Enqueued instant. The oldest waiting job's age (now minus its Enqueued, zero when none waits) and the completion latency (Done minus Enqueued, not minus Take) say how long users wait; depth alone cannot.",
		Docs:          docs + "#queue-age-over-depth",
	},
	{
		ID:            "backlog-math",
		Title:         "Calculate recovery, do not guess",
		Misconception: "Recovery time is just the backlog divided by the difference of the rates, whatever the rates are.",
		Hint:          "Growth is arrival minus capacity. Decide the special cases before you divide: an empty backlog is drained now; capacity at or below arrival never drains (no division by zero, no negative time). Clamp a huge result to the longest Duration, and refuse negative, NaN and infinite input.",
		Docs:          docs + "#calculate-recovery-do-not-guess",
	},
	{
		ID:            "queue-contract",
		Title:         "The queue's contract",
		Misconception: "Defaults, tickets, ordering and contexts are details the caller gets right, so the queue need not care.",
		Hint:          "Apply the documented defaults in New. Hand out the oldest job first with a fresh ticket, accept each ticket's Done once, and check the context at the start of every method: a refused call changes nothing.",
		Docs:          docs + "#the-queues-contract",
	},
	{
		ID:            "model-sequences",
		Title:         "Every rule holds after any sequence of calls",
		Misconception: "If each rule holds in the scenario I thought of, it holds in every order of submits, claims, takes, dones, cancellations and deadlines.",
		Hint:          "Read the timeline from the top: it is the shortest sequence of calls found that breaks a rule. At each step, count the places taken (jobs waiting plus claims in progress) and each tenant's share: which Submits should have had room, which should be waiting, and until which instant?",
		Docs:          docs + "#mental-model-a-car-park-with-a-ticket-machine",
	},
}

// tests are the cases, in the order they run.
var tests = []suites.Test[*target]{
	{
		Case: suites.Case{
			Name:        "options_and_defaults",
			Concept:     "queue-contract",
			Rules:       []string{"R1"},
			Points:      5,
			Explanation: "A zero or negative Capacity means 1000 places; a zero or negative TenantLimit means a quarter of the capacity (at least one); a TenantLimit above the capacity is the capacity; a zero or negative MaxWait refuses a full queue's job at once. Each default is checked at its exact limit and one past it.",
		},
		Check: checkOptions,
	},
	{
		Case: suites.Case{
			Name:        "full_queue_refuses_at_once",
			Concept:     "bounded-queue",
			Rules:       []string{"R2", "R8"},
			Points:      7,
			Explanation: "A queue with Capacity places admits exactly that many jobs; the next one is refused at once, before any time passes, with an error wrapping ErrQueueFull (the queue's refusal, not ErrTenantFull, whatever the tenant's share), its key not claimed and the refusal counted; a job taken frees exactly one place. A clean, immediate rejection is what lets a producer slow down or go elsewhere.",
		},
		Check: checkFullQueue,
	},
	{
		Case: suites.Case{
			Name:        "offered_load_does_not_grow_the_queue",
			Concept:     "bounded-queue",
			Rules:       []string{"R2", "R3", "R8"},
			Points:      7,
			Explanation: "20,000 jobs offered to a full queue of 64 are all refused: its depth stays 64, its refusals are counted, and draining it gives back exactly the first 64 jobs, in order. An unbounded queue, or one that makes room by dropping old jobs, defers the failure to an out-of-memory crash or silently loses admitted work.",
		},
		Check: checkOfferedLoad,
	},
	{
		Case: suites.Case{
			Name:        "jobs_come_out_oldest_first_once",
			Concept:     "queue-contract",
			Rules:       []string{"R3"},
			Points:      5,
			Explanation: "Take hands out the waiting jobs in the order they were queued, each once, with its tenant, key and job unchanged (multi-byte text and empty fields too), the instant it was queued, and a ticket no other Take had; an empty queue says ErrQueueEmpty, days later too.",
		},
		Check: checkOrder,
	},
	{
		Case: suites.Case{
			Name:        "full_queue_waits_only_until_a_deadline",
			Concept:     "deadline-wait",
			Rules:       []string{"R4", "R8"},
			Points:      8,
			Explanation: "With MaxWait set, a Submit that finds no room waits for one, and only until MaxWait passes or its context is done, whichever is first (both orders are checked, a nanosecond before and at the instant): then it is refused with ErrQueueFull (a counted rejection) or the context's error (not one, and not ErrQueueFull). When MaxWait ends at the very instant of the context's deadline, the deadline wins every time: a select on two channels ready at once picks one at random, so decide the tie before you wait. MaxWait counts from the Submit's own start: a wakeup that finds no room for it does not start the wait again. A place freed meanwhile admits it at once. While it waits it has claimed nothing and holds no place.",
		},
		Check: checkDeadlines,
	},
	{
		Case: suites.Case{
			Name:        "admission_before_the_claim",
			Concept:     "admit-before-claim",
			Rules:       []string{"R5", "R8"},
			Points:      8,
			Explanation: "A refused job never claims its key, so the client's retry with the same key is admitted and claimed once. The claim happens after the job's place is reserved: while a slow claim is in progress the place is taken (another Submit for it is refused) though its job is not waiting yet (not in the depth, not handed out), and the slow claim store holds up no other Submit, Take or Stats.",
		},
		Check: checkAdmissionBeforeClaim,
	},
	{
		Case: suites.Case{
			Name:        "failed_claim_gives_the_room_back",
			Concept:     "admit-before-claim",
			Rules:       []string{"R6", "R8"},
			Points:      6,
			Explanation: "When the claim fails (a duplicate key, or the claim store is down), Submit returns the claim store's error, queues nothing and gives the job's place back, in the queue and in its tenant's share; a Submit waiting for room gets it. It is not a rejection: Stats counts in Rejected only the Submits refused for lack of room, even when the claim store's error wraps ErrQueueFull. A job whose key was claimed is queued even if its context was cancelled during the claim: dropping it would leave its key claimed by a job that never runs.",
		},
		Check: checkFailedClaim,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_submits_never_exceed_capacity",
			Concept:     "admit-before-claim",
			Rules:       []string{"R5", "R14"},
			Points:      6,
			Explanation: "Many producers submit at once while their claims are held still: exactly Capacity of them are admitted and claim their keys, every other one is refused at once without claiming, and the depth never exceeds Capacity. A check of the room and a later insert, with the claim between them, lets every producer through.",
		},
		Check: checkConcurrentSubmits,
	},
	{
		Case: suites.Case{
			Name:        "noisy_tenant_cannot_starve_others",
			Concept:     "tenant-isolation",
			Rules:       []string{"R7", "R4"},
			Points:      8,
			Explanation: "A tenant that floods the queue gets its share (TenantLimit waiting jobs) and is then refused with ErrTenantFull, which wraps ErrQueueFull, while the other tenants are still admitted; its place comes back when its job is taken; and its Submits waiting for room hold up nobody else's: a place freed that the noisy tenant cannot use admits another tenant's waiting Submit at once, though noisy has waited longer. Waiters refused when no place of the queue is free get ErrQueueFull, not ErrTenantFull.",
		},
		Check: checkNoisyTenant,
	},
	{
		Case: suites.Case{
			Name:        "oldest_age_not_only_depth",
			Concept:     "queue-age",
			Rules:       []string{"R9"},
			Points:      7,
			Explanation: "Stats reports how long the oldest waiting job has waited, exactly, on virtual time: not the newest job's age, not a taken job's, zero when nothing waits, and still growing 400 days later when nothing takes it. A queue stuck at depth 1 looks healthy by depth; its age says it is not.",
		},
		Check: checkOldestAge,
	},
	{
		Case: suites.Case{
			Name:        "completion_latency_from_enqueue",
			Concept:     "queue-age",
			Rules:       []string{"R10", "R8"},
			Points:      6,
			Explanation: "Done records the job's completion latency from the instant it was queued (its wait in the queue included, not only its work), the last and the longest since New (a short latency followed by a longer one does not replace the longest), and counts it; a ticket never handed out, or already done, is refused with ErrUnknownTicket and counts nothing.",
		},
		Check: checkLatency,
	},
	{
		Case: suites.Case{
			Name:        "backlog_arithmetic",
			Concept:     "backlog-math",
			Rules:       []string{"R11"},
			Points:      7,
			Explanation: "Growth is arrival minus capacity; recovery is backlog / (capacity - arrival): 12,000 jobs with 80 arriving and 100 done per second drain in 600 seconds. An empty backlog is drained now; capacity equal to or below arrival never drains (no infinity, no negative time); a huge recovery is the longest Duration, never a wrapped-around negative one.",
		},
		Check: checkForecast,
	},
	{
		Case: suites.Case{
			Name:        "forecast_refuses_bad_rates",
			Concept:     "backlog-math",
			Rules:       []string{"R12"},
			Points:      3,
			Explanation: "A negative backlog, and a rate that is negative, NaN or infinite, are refused with ErrInvalidRate instead of producing a forecast nobody should act on. The check comes first: an empty backlog with a NaN rate is refused too.",
		},
		Check: checkForecastInput,
	},
	{
		Case: suites.Case{
			Name:        "cancelled_context_changes_nothing",
			Concept:     "queue-contract",
			Rules:       []string{"R13", "R6"},
			Points:      4,
			Explanation: "Submit, Take and Done with a cancelled context, or one past its deadline, return an error wrapping the context's error and change nothing: nothing admitted, claimed, taken, done or counted, on a full queue too (the context's error, not ErrQueueFull).",
		},
		Check: checkCancelledContext,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_takes_and_dones",
			Concept:     "queue-contract",
			Rules:       []string{"R14", "R3", "R8"},
			Points:      3,
			Explanation: "Producers of three tenants submit while four workers take and finish jobs, all at once: every admitted job is taken exactly once and done once, the depth never exceeds Capacity, and the counts add up in the end.",
		},
		Check: checkConcurrentWorkers,
	},
	{
		Case: suites.Case{
			Name:        "random_call_sequences_follow_the_rules",
			Concept:     "model-sequences",
			Rules:       []string{"R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "R13"},
			Points:      6,
			Explanation: "Sixty generated sequences of about fifty calls, each on a new queue (Capacity 1, 2, 3 or the default, TenantLimit at, below, above and by default, MaxWait zero, negative, 10s or an hour, with the suite's claim store or none), every step compared with what the rules allow: Submit for three tenants drawn to collide (case, a trailing space, invalid UTF-8 and U+FFFD, the empty name) under keys that repeat, with a context cancelled, past its deadline, or with a deadline a nanosecond before, exactly at or a nanosecond after MaxWait; claims that succeed, are duplicates, fail (also with an error wrapping ErrQueueFull) or are held still and answer later; Take, Done with tickets taken, done already, zero or never handed out, cancelled contexts; cancelling a waiting Submit; the clock moved to a nanosecond before, exactly to and a nanosecond after each waiter's end, or by up to 400 days; Stats compared exactly after every step; ForecastBacklog with empty, negative and huge backlogs and invalid rates. A failing sequence is shortened to the fewest steps that still break a rule; that is the timeline you see.",
		},
		Model: checkModelSequences,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_calls_are_linearizable",
			Concept:     "admit-before-claim",
			Rules:       []string{"R2", "R3", "R5", "R7", "R8", "R10", "R14"},
			Points:      4,
			Explanation: "Four clients at once, for real, make five calls each on a queue of 3 places and 2 per tenant (Submit for two tenants, Take, Done of their latest job, once or twice, and Stats), thirty rounds, with a claim store that yields the processor while it claims; whatever the scheduler did, what each admission, Take, Done and Stats returned must be explained by the calls taking effect one at a time (a Submit's admission before its claim and its job queued after it; a taken job's place freed during its Take), and once every call has returned, Stats must count exactly the jobs admitted, refused, taken and done. A history that no such order explains is shown whole. Whether a race shows up varies from run to run, so this case can only ever fail a queue that is wrong; if the check runs out of time it says \"not exercised\".",
		},
		Model: checkModelLinearizable,
	},
}
