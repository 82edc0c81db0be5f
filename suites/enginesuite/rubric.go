package enginesuite

import (
	"testing"

	"github.com/fourth-outcome/labkit/suites"
)

// Lab is the rubric of lab 10: its concepts and cases.
var Lab = suites.Lab{
	Number:   10,
	Slug:     "engine",
	Title:    "The durable agent task engine",
	TestName: "TestEngine",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/10-engine.md"

var concepts = []suites.Concept{
	{
		ID:            "idempotent-submission",
		Title:         "Submission is idempotent",
		Misconception: "A client submits a job once; a second submission with the same ID is a new request and may start it over.",
		Hint:          "The job's ID is its idempotency key in every state: queued, leased, done or dead. Look it up first; the same contents change nothing, other contents are ErrConflict. Refuse an invalid job before storing anything.",
		Docs:          docs + "#submission-is-idempotent",
	},
	{
		ID:            "bounded-admission",
		Title:         "Admission is bounded",
		Misconception: "A backend can always take one more job; the limit is somebody else's problem, and counting everything ever submitted is close enough.",
		Hint:          "Count only unfinished jobs (queued or leased). Answer a duplicate before the capacity check, and reject a new job before anything of it is written, so that its ID is free again once there is room.",
		Docs:          docs + "#admission-is-bounded",
	},
	{
		ID:            "leased-checkout",
		Title:         "A lease, not a hand-off",
		Misconception: "Once a worker took a job, the job is the worker's until it says otherwise.",
		Hint:          "A lease holds while the clock is before Expires, and at Expires exactly the job is visible again. Keep one 'visible from' instant per unfinished job (the backoff's end, or the lease's end) and lease the earliest one at or before now.",
		Docs:          docs + "#a-lease-not-a-hand-off",
	},
	{
		ID:            "fencing",
		Title:         "Fencing tokens stop zombies",
		Misconception: "A worker whose lease ended will notice and stop; checking the worker's name, or a token that is merely different, is enough.",
		Hint:          "Grant every lease a token from one counter that only goes up, and make Checkpoint, Complete and Fail check, in the same atomic step as their write, that the token is the job's latest and the lease has not ended.",
		Docs:          docs + "#fencing-tokens-stop-zombies",
	},
	{
		ID:            "checkpoint",
		Title:         "Checkpoints make resumption safe",
		Misconception: "A job that was interrupted should start again from its first step, or skip the step that was interrupted.",
		Hint:          "Checkpoint after a step's effect is durable at the provider, never before; start the next delivery at the lease's Step; let a checkpoint renew the lease from now, as a heartbeat.",
		Docs:          docs + "#checkpoints-make-resumption-safe",
	},
	{
		ID:            "retry-backoff",
		Title:         "Retries wait, and reuse the key",
		Misconception: "A failed step should be retried at once, and a retry is a new request.",
		Hint:          "Fail makes the job visible again min(MaxBackoff, BaseBackoff*2^(n-1)) after now, n being the failed delivery. The retry sends the step with the same key as before, derived from the job's ID and the step's index, so that a lost reply is replayed by the provider, not repeated.",
		Docs:          docs + "#retries-wait-and-reuse-the-key",
	},
	{
		ID:            "dead-letter",
		Title:         "Dead-letter by delivery count, with the reason",
		Misconception: "Counting the failures workers report is enough to stop a poison job, and a parked job needs no explanation.",
		Hint:          "Count in Lease. A Fail of the MaxDeliveries-th delivery, or a permanent one, parks the job at once; a Lease that finds a job whose last delivery expired parks it instead of delivering it. Keep the reason and the last error.",
		Docs:          docs + "#dead-letter-by-delivery-count",
	},
	{
		ID:            "atomic-backend",
		Title:         "Every operation is one atomic step",
		Misconception: "Reading a job in Redis, deciding in Go and writing it back is as good as doing it in one go, as long as the code is quick.",
		Hint:          "Put each read-decide-write in one Lua script (or WATCH plus MULTI/EXEC); keep nothing in the Go value that another process would need, the token counter included; put every key under the namespace.",
		Docs:          docs + "#every-operation-is-one-atomic-step",
	},
	{
		ID:            "backend-contract",
		Title:         "The backend's contract",
		Misconception: "Options, contexts and Redis errors are details; an error from Redis can be reported as 'no job', and a cancelled call may still go through.",
		Hint:          "Check the options in the constructor and the context at the start of every method; return Redis's error wrapped, never a sentinel in its place.",
		Docs:          docs + "#the-backends-contract",
	},
	{
		ID:            "model-sequences",
		Title:         "Every rule holds after any sequence of calls and failures",
		Misconception: "If each rule holds in the scenario I thought of, it holds after any mix of submissions, leases, reports, expiries, restarts and Redis failures.",
		Hint:          "Read the timeline from the top: it is the shortest sequence found that breaks a rule. For each job, write down its state, deliveries, checkpoint, token and until after every step, and the number of unfinished jobs; then find the first step whose answer your backend got wrong.",
		Docs:          docs + "#mental-model-one-record-one-instant-one-counter",
	},
	{
		ID:            "effectively-once",
		Title:         "Effectively once, end to end",
		Misconception: "With leases, retries and checkpoints in place, the engine is exactly-once by construction, whatever each worker does with an error.",
		Hint:          "Per step: a key derived from the job and the step, the Send, then the checkpoint. On an error: is it retryable (a lost reply is) or permanent? Was it my own context? Is my lease gone? Each answer has one move, and a zombie's move is to stop.",
		Docs:          docs + "#effectively-once-end-to-end",
	},
}

// tests are the cases, in the order they run: each case of both backends
// split in two by perBackend.
var tests = perBackend(specs)

// MemorySuffix and RedisSuffix end the names of a case's two halves: a
// case that holds for both backends runs as <name>_on_memory, then
// <name>_on_redis, each with its own points (the memory half has the odd
// point), so that each backend earns its own credit.
const (
	MemorySuffix = "_on_memory"
	RedisSuffix  = "_on_redis"
)

// spec is a case before perBackend splits it: check runs on both backends
// unless redisOnly. A model case sets model instead of check: it gives the
// case's Model for a backend kind.
type spec struct {
	suites.Case
	check     func(w *world)
	model     func(kind string) func(*testing.T, *suites.History, suites.Fresh[*target])
	redisOnly bool
}

// perBackend turns specs into the suite's cases: a redisOnly spec is one
// case on Redis; any other is two, one per backend, whose points add up to
// the spec's.
func perBackend(specs []spec) []suites.Test[*target] {
	var out []suites.Test[*target]
	for _, s := range specs {
		if s.redisOnly {
			out = append(out, suites.Test[*target]{Case: s.Case, Check: onBackend(redisKind, s.check)})
			continue
		}
		mem, rds := s.Case, s.Case
		mem.Name, rds.Name = s.Name+MemorySuffix, s.Name+RedisSuffix
		mem.Points = (s.Points + 1) / 2
		rds.Points = s.Points - mem.Points
		mem.Explanation = "On the memory backend. " + s.Explanation
		rds.Explanation = "On the Redis backend. " + s.Explanation
		if s.model != nil {
			out = append(out,
				suites.Test[*target]{Case: mem, Model: s.model(memoryKind)},
				suites.Test[*target]{Case: rds, Model: s.model(redisKind)})
			continue
		}
		out = append(out,
			suites.Test[*target]{Case: mem, Check: onBackend(memoryKind, s.check)},
			suites.Test[*target]{Case: rds, Check: onBackend(redisKind, s.check)})
	}
	return out
}

// specs are lab 10's cases before the split, in the order they run.
var specs = []spec{
	{
		Case: suites.Case{
			Name: "submit_is_idempotent_by_job_id", Concept: "idempotent-submission", Points: 5, Rules: []string{"R1", "R10"},
			Explanation: "A client that did not hear back submits again. The job's ID is its idempotency key: the same job submitted again, whether queued, leased or done, changes nothing; the same ID with other contents is a conflict; an invalid job is refused and leaves nothing behind. Fields whose text runs on into the next (account acc with document tjob-1-doc-0 for acct with job-1-doc-0) are other contents too.",
		},
		check: checkSubmitIdempotent,
	},
	{
		Case: suites.Case{
			Name: "submission_is_bounded_by_capacity", Concept: "bounded-admission", Points: 4, Rules: []string{"R2"},
			Explanation: "A backend with room for Capacity unfinished jobs rejects the next one with ErrFull and stores nothing of it, answers a duplicate even when full and lets no duplicate take room, and takes new jobs again as soon as one is done or dead; Capacity 0 means 100.",
		},
		check: checkBounded,
	},
	{
		Case: suites.Case{
			Name: "a_lease_hides_the_job_until_it_expires", Concept: "leased-checkout", Points: 5, Rules: []string{"R3", "R10"},
			Explanation: "A leased job is invisible to every other worker while the clock is before Expires, which is the lease's instant plus the visibility timeout (30 s by default), and visible again at Expires exactly; the job visible first is leased first, exactly as submitted, and what Lease and Inspect return is the caller's copy.",
		},
		check: checkLeaseVisibility,
	},
	{
		Case: suites.Case{
			Name: "every_lease_counts_a_delivery_with_a_greater_token", Concept: "fencing", Points: 5, Rules: []string{"R4"},
			Explanation: "Each lease counts one delivery of its job and carries a fencing token greater than every token granted before, for any job and in any process, after an expiry and after a failure: the token is what tells the current holder from a zombie.",
		},
		check: checkTokens,
	},
	{
		Case: suites.Case{
			Name: "a_zombie_cannot_checkpoint_complete_or_fail", Concept: "fencing", Points: 6, Rules: []string{"R5"},
			Explanation: "A worker that stalled past its lease wakes up and reports. Its Checkpoint, Complete and Fail must be refused with ErrLeaseLost and change nothing: at the lease's Expires already, after another worker leased the job, with a token that is not the current one, and after the lease was ended by Complete or by Fail.",
		},
		check: checkFencing,
	},
	{
		Case: suites.Case{
			Name: "checkpoint_records_progress_and_renews_the_lease", Concept: "checkpoint", Points: 5, Rules: []string{"R6"},
			Explanation: "A checkpoint records how many steps are done and renews the lease from now, so a long job keeps its lease while it makes progress; when it stops, the next delivery starts at the checkpoint.",
		},
		check: checkCheckpoint,
	},
	{
		Case: suites.Case{
			Name: "failure_retries_after_exponential_backoff", Concept: "retry-backoff", Points: 5, Rules: []string{"R7"},
			Explanation: "After the n-th delivery fails, the job is visible again exactly min(MaxBackoff, BaseBackoff*2^(n-1)) later, not before, with the failure's text kept; zero options mean 1 s and 5 min, and 40 failures in a row stay at the cap. n is the delivery: a failure after a crashed delivery waits 2s, not 1s.",
		},
		check: checkBackoff,
	},
	{
		Case: suites.Case{
			Name: "crashing_workers_still_dead_letter_the_job", Concept: "dead-letter", Points: 5, Rules: []string{"R8"},
			Explanation: "A poison job crashes every worker that leases it, and a crashed worker reports nothing. Because the lease counts the delivery, the job is dead-lettered after MaxDeliveries (5 by default) deliveries anyway, keeping the last error anyone reported, and is never delivered again, even 30 days later; the Lease that dead-letters it goes on to the next visible job.",
		},
		check: checkDeliveryCount,
	},
	{
		Case: suites.Case{
			Name: "failing_the_last_delivery_dead_letters_with_a_reason", Concept: "dead-letter", Points: 4, Rules: []string{"R8", "R9"},
			Explanation: "A failure of the last allowed delivery dead-letters the job at once (reason \"max deliveries\"), and a permanent failure on any delivery, the last one included, does too (reason \"permanent failure\"); both keep the failure's text, and neither job is delivered again.",
		},
		check: checkDeadLetterOnFail,
	},
	{
		Case: suites.Case{
			Name: "options_are_checked_and_the_clock_is_injected", Concept: "backend-contract", Points: 3, Rules: []string{"R11"},
			Explanation: "A negative option, or a visibility timeout over 12 h, is refused by the constructor; 12 h exactly is accepted; the backend reads no clock but Options.Now and keeps its times truncated to the millisecond, and a nil Now is time.Now.",
		},
		check: checkOptions,
	},
	{
		Case: suites.Case{
			Name: "concurrent_transitions_have_one_winner", Concept: "atomic-backend", Points: 5, Rules: []string{"R12"},
			Explanation: "Two workers lease the only job at once; two clients submit the same job, or two jobs with room for one; a Complete races a Fail of the same lease. Exactly one of each pair wins, and the state is the winner's. On Redis the suite holds one process's every command in turn while the other runs, so a read and a write sent as two commands are caught.",
		},
		check: checkConcurrent,
	},
	{
		Case: suites.Case{
			Name: "redis_state_outlives_the_process", Concept: "atomic-backend", Points: 5, Rules: []string{"R13"},
			Explanation: "A worker process dies and another starts on the same server and namespace: it sees every job, its checkpoint and its token, and grants greater tokens; every key lives under the namespace, and another namespace sees none of it. Jobs named after the backend's own keys are jobs like any other.",
		},
		check: checkRedisDurable, redisOnly: true,
	},
	{
		Case: suites.Case{
			Name: "redis_errors_are_returned_and_change_nothing", Concept: "backend-contract", Points: 3, Rules: []string{"R14"},
			Explanation: "When Redis fails any command of an operation, or the client is closed, the operation returns the error, never ErrNoJob, a success or another sentinel in its place, and the data in Redis is as it was.",
		},
		check: checkRedisErrors, redisOnly: true,
	},
	{
		Case: suites.Case{
			Name: "cancelled_contexts_change_nothing", Concept: "backend-contract", Points: 4, Rules: []string{"R14", "R16"},
			Explanation: "Every backend method with a cancelled context returns an error wrapping context.Canceled and changes nothing; an engine whose context is cancelled at any point of a job returns that error without reporting a failure, and the job's next delivery finishes it with one delivery per step.",
		},
		check: checkCancelled,
	},
	{
		Case: suites.Case{
			Name: "the_engine_runs_each_step_once_in_order", Concept: "effectively-once", Points: 5, Rules: []string{"R15"},
			Explanation: "Work leases a job and runs its steps in order under the job's account, one Send each, with a key of each step's own: two jobs with the same documents are two jobs, and each document is delivered once per job. That holds for two job IDs too long for a provider key that differ only in their last byte: hash such an ID, or let the provider's refusal fail the job for good, but never cut it short to fit. Jobs x and \"x \" are two jobs too.",
		},
		check: checkEngineRuns,
	},
	{
		Case: suites.Case{
			Name: "a_lost_reply_is_retried_with_the_same_key", Concept: "retry-backoff", Points: 6, Rules: []string{"R15", "R16"},
			Explanation: "The provider commits a step and the reply is lost (the fourth outcome), or it is unavailable. The engine fails the job for a retry after the backoff, and the retry sends the same key, so the provider replays its answer and the customer gets one signing request. The lost reply wraps context.DeadlineExceeded, as the provider's response timeout does: the provider's deadline, not Work's.",
		},
		check: checkLostReply,
	},
	{
		Case: suites.Case{
			Name: "a_crashed_worker_resumes_from_the_checkpoint", Concept: "checkpoint", Points: 5, Rules: []string{"R15"},
			Explanation: "A worker crashes before or after a Send, a Checkpoint or the Complete. The next delivery starts at the checkpoint: a checkpointed step is not sent again, a step sent but not checkpointed is sent again with the same key, and every step is delivered once.",
		},
		check: checkResume,
	},
	{
		Case: suites.Case{
			Name: "permanent_errors_and_lost_leases_stop_the_work", Concept: "effectively-once", Points: 4, Rules: []string{"R9", "R16"},
			Explanation: "A step the provider refuses as invalid will never succeed: the job is dead-lettered at once, and no later step is sent. A worker that stalled past its lease and finds it lost at its checkpoint stops: it sends no further step and does not complete. An account the provider refuses (ErrUnauthorized) is as permanent as an invalid recipient.",
		},
		check: checkPermanentAndLost,
	},
	{
		Case: suites.Case{
			Name: "seeded_chaos_every_job_done_once_or_dead_lettered", Concept: "effectively-once", Points: 6, Rules: []string{"R17"},
			Explanation: "Sixteen jobs, three workers that crash at random points and stall past their leases, a provider that fails and loses replies, all drawn from the case's seed. At the end every job is done with each step delivered exactly once, or dead-lettered with a reason; none is lost and no step is delivered twice. A failure prints the seed and the command that replays it (check 10 --seed N).",
		},
		check: checkChaos,
	},
	{
		Case: suites.Case{
			Name: "random_call_sequences_follow_the_rules", Concept: "model-sequences", Points: 6,
			Rules:       []string{"R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11", "R13", "R14"},
			Explanation: "Generated sequences of backend calls (a hundred on memory, thirty-two on Redis), each on a new backend, compared step by step with the rules: Submit of jobs whose IDs are drawn to collide (a trailing space, case, IDs a backend could join to a number or a field name without a separator, names of a backend's other keys, invalid UTF-8 and U+FFFD, a NUL, the empty ID, 300-byte IDs that differ in their last byte) and of other contents under the same ID; Lease by three workers; Checkpoint, Complete and Fail with the current lease, an older one and a forged token, and causes that wrap ErrPermanent or only say so; Inspect; Options with small capacities and delivery counts, or zero (the defaults); the clock moved to just before, exactly to and just after every lease's end and backoff's end, by 0.7 ms, or by up to thirty days; cancelled contexts; and on Redis, a command failing before it takes effect or its reply lost after, a process restarted, and SCRIPT FLUSH. A failing sequence is shortened to the fewest steps that still break a rule, and that is the timeline you see.",
		},
		model: checkModelSequences,
	},
	{
		Case: suites.Case{
			Name: "concurrent_calls_are_linearizable", Concept: "atomic-backend", Points: 4, Rules: []string{"R1", "R2", "R3", "R4", "R5", "R6", "R10", "R12"},
			Explanation: "Three clients at once (goroutines on memory, processes with a client each on Redis), for real, make five calls each (Submit of three jobs with room for two, Lease, Checkpoint, Complete and Fail of any lease received so far, Inspect) on a backend whose clock stands still, sixteen rounds; whatever the scheduler did, what each call returned must be explainable by the calls taking effect one at a time, per job and across jobs (the room left, the jobs visible), and every lease's token must be greater than that of every lease that returned before it was called. A history that no such order explains is shown whole. Whether a race shows up varies from run to run, so this case can only ever fail a backend that is wrong; if the check runs out of time it says \"not exercised\".",
		},
		model: checkModelLinearizable,
	},
}
