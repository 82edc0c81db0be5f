// Package changelog is the kit's record of changes to the grading rules,
// per lab: a case added, split, re-weighted or made stricter. Every grade
// records the changelog's Level at the time, so a regrade months later can
// say which changes lie between the two grades and explain a difference in
// score. docs/changelog.md shows the same entries; a test keeps them in
// step.
package changelog

import "fmt"

// Entry is one change of the rules.
type Entry struct {
	Level  int    // 1 for the first entry, then one more each
	Date   string // when the change was made, 2006-01-02
	Labs   []int  // the labs whose scores it may change; none: every lab
	Change string // what changed, in a sentence for instructor and student
}

// Entries are the changes, oldest first. Append only: a grade records
// Level, and an entry's Level is its position.
var Entries = []Entry{
	{Level: 1, Date: "2026-12-01", Change: "Baseline: every lab of the course, scored by one Finalize; a grade from before this entry has no level."},
	{Level: 2, Date: "2026-12-02", Change: "A run whose output was tampered with (an attestation the suite did not sign, seen twice or contradicted) is void and scores 0."},
	{Level: 3, Date: "2026-12-02", Labs: []int{10}, Change: "Lab 10's cases that hold for both backends are split in two, <case>_on_memory and <case>_on_redis, each with its own points (the memory half has the odd point): a correct memory backend earns its half while the Redis backend is unstarted, where the whole case scored 0 before."},
	{Level: 4, Date: "2026-12-02", Labs: []int{5}, Change: "lease_hands_out_the_oldest_visible_task wants sixteen tasks enqueued at one instant in the order of their Enqueue calls; worker_stops_when_its_lease_is_lost lets the cancelled handler return before the lease would have ended, and wants no Ack or Nack with the lost token then either (R14)."},
	{Level: 5, Date: "2026-12-02", Labs: []int{8}, Change: "R1 says who copies: the store, not the KV. store_fences_every_commit runs its copy check over a KV that keeps the slice Put was given, so a store that relied on the KV to copy now loses that case's points."},
	{Level: 6, Date: "2026-12-02", Labs: []int{9}, Change: "failed_claim_gives_the_room_back also checks R8: a Submit whose claim failed is not counted in Stats.Rejected."},
	{Level: 7, Date: "2026-12-02", Labs: []int{10}, Change: "R3 says byte for byte: a job whose strings are not valid UTF-8 comes back exactly (submit_is_idempotent_by_job_id); the submission instant is kept to the millisecond (options_are_checked_and_the_clock_is_injected); an Inspect beside a Lease and a Complete sees one moment's state, under the race detector too (concurrent_transitions_have_one_winner); job a1's step 0 and job a's step 10 get different keys (the_engine_runs_each_step_once_in_order)."},
	{Level: 8, Date: "2026-12-02", Labs: []int{3}, Change: "R10: a Find or Status the provider refuses leaves the task pending; lookup_by_reference_after_retention refuses the first lookup after 25 h (401), so recording the task Failed or sending after that refusal now fails it. retries_reuse_the_operation_id adds a crash followed by a throttled lookup (R9), which also catches a key kept in memory."},
	{Level: 9, Date: "2026-12-02", Labs: []int{6}, Change: "R10: a Write cancelled while it waits for another Write of its key returns an error wrapping context.Canceled and writes nothing (cancelled_context_changes_nothing)."},
	{Level: 10, Date: "2026-12-02", Labs: []int{7}, Change: "R7: Receive calls the validator only on the task it is about to deliver (malformed_task_dead_lettered_at_once); R12: a Receive cancelled during the validator delivers the task or leaves it visible with its count unchanged (cancelled_context_changes_nothing)."},
	{Level: 11, Date: "2026-12-02", Labs: []int{10}, Change: "R15: two jobs whose IDs are too long for a provider key each end done, or dead with reason permanent, and each document is delivered once per done job (the_engine_runs_each_step_once_in_order): a key cut short to fit now fails."},
	{Level: 12, Date: "2026-12-02", Labs: []int{4}, Change: "A negative Timeout means no deadline (deadline_is_never_crossed); an attempt that succeeds after the cancel returns nil and puts its token back (cancellation_stops_retrying); NewBudget with a negative capacity is an empty budget that a Deposit does not fill (retry_budget_pays_only_for_retries_made)."},
	{Level: 13, Date: "2026-12-02", Labs: []int{5}, Change: "R13 says at the latest half-way: worker_renews_long_work wants each renewal at most half the lease's length after the lease began or was last renewed."},
	{Level: 14, Date: "2026-12-02", Labs: []int{8}, Change: "Run with a done context returns the context's error even for an empty task ID (cancelled_context_at_every_point); Total is this run's number of steps, so a 4-step checkpoint resumed with 5 steps reports 5 (completed_steps_are_not_run_again)."},
	{Level: 15, Date: "2026-12-02", Labs: []int{9}, Change: "MaxWait and the context's deadline at one instant: the context wins, DeadlineExceeded, not counted as a rejection (full_queue_waits_only_until_a_deadline); a waiter's or a done context's error does not wrap ErrQueueFull (cancelled_context_changes_nothing); a claim error that wraps ErrQueueFull is not counted as rejected (failed_claim_gives_the_room_back)."},
	{Level: 16, Date: "2026-12-02", Labs: []int{6}, Change: "Two model cases: random_call_sequences_follow_the_rules (6 points, generated sequences of calls, clock moves and KV faults compared with a model of the README) and concurrent_calls_are_linearizable (4 points, concurrent histories checked with porcupine; a check that runs out of time is not exercised). Five cases give 2 points each to them: grant_carries_holder_token_and_expiry, tokens_increase_on_every_grant, first_and_repeated_writes_are_accepted, lower_token_is_refused, zombie_write_is_refused."},
	{Level: 17, Date: "2026-12-02", Labs: []int{1, 2}, Change: "Two model cases in each lab: random_call_sequences_follow_the_rules (lab 01: 10 points, lab 02: 10) compares generated sequences of calls and faults with a model of the README, and concurrent_calls_are_linearizable (lab 01: 5, lab 02: 4) checks concurrent histories with porcupine (a check that runs out of time is not exercised); the other cases give up the points. Lab 01's keys_compare_exactly adds keys that are not valid UTF-8 and asks every key twice (the empty key is a key; keys compare byte for byte); lab 02's R7 names bytes that are not valid UTF-8, and results_replayed_byte_for_byte replays them."},
	{Level: 18, Date: "2026-12-02", Labs: []int{3}, Change: "A model case: random_call_sequences_follow_the_rules (8 points) compares generated sequences of deliveries, crashes at a drawn call, provider faults, restarts and clock moves around the retention with a model of the README. retries_reuse_the_operation_id, lost_response_is_not_a_failure, refusals_are_not_retried and lookup_by_reference_after_retention give 1 point each, crash_after_commit_before_response and random_crashes_never_duplicate 2 each."},
	{Level: 19, Date: "2026-12-02", Labs: []int{7}, Change: "Two model cases: random_call_sequences_follow_the_rules (6 points: generated sequences of sends, receives, acks, lease expiries, validator faults and redrives compared with a model of the README; a lease that expires is a delivery) and concurrent_calls_are_linearizable (4 points, concurrent histories checked with porcupine; a check that runs out of time is not exercised). count_increases_on_delivery and crashed_consumer_still_dead_letters give 3 points each, limit_is_exact and redrive_resets_the_count 2 each."},
	{Level: 20, Date: "2026-12-02", Labs: []int{5}, Change: "Two model cases: random_call_sequences_follow_the_rules (6 points: generated sequences of Enqueue, Lease, Extend, Ack and Nack, cancelled contexts, durations at their limits and the clock moved around every expiry, compared with a model of the README) and concurrent_calls_are_linearizable (4 points, concurrent histories checked with porcupine; a check that runs out of time is not exercised). leased_task_is_invisible_until_its_lease_ends, renewal_counts_from_now, only_the_current_holder_acks, nack_releases_after_its_delay and concurrent_leases_never_share_a_task give 2 points each."},
	{Level: 21, Date: "2026-12-02", Labs: []int{10}, Change: "Two model cases, each on both backends: random_call_sequences_follow_the_rules (6 points: generated Submit, Lease, Checkpoint, Complete, Fail and Inspect on colliding job IDs, the clock moved to every lease's and backoff's end, cancelled contexts, Redis commands failed before or lost after their effect, restarts and SCRIPT FLUSH) and concurrent_calls_are_linearizable (4 points, concurrent histories checked with porcupine per job and across jobs; a check that runs out of time is not exercised). concurrent_transitions_have_one_winner gives 2 points; submit_is_idempotent_by_job_id, submission_is_bounded_by_capacity, a_lease_hides_the_job_until_it_expires, a_zombie_cannot_checkpoint_complete_or_fail, failure_retries_after_exponential_backoff, crashing_workers_still_dead_letter_the_job, failing_the_last_delivery_dead_letters_with_a_reason and redis_errors_are_returned_and_change_nothing 1 each."},
	{Level: 22, Date: "2026-12-02", Labs: []int{5}, Change: "R15: a failed task is released after a backoff, Nack(token, WorkerOptions.Backoff(attempt)) for the attempt that failed, or Nack(token, 0) when Backoff is nil. worker_acks_success_and_releases_failure gives the worker a Backoff of 10 s, 25 s and 5 s for attempts 1 to 3 and wants each failed task visible exactly then: a worker that ignores Backoff now loses that case's points."},
	{Level: 23, Date: "2026-12-02", Labs: []int{4}, Change: "Two model cases: random_call_sequences_follow_the_rules (6 points: generated Do calls with drawn policies, status codes and Retry-After values, failures before or after their effect, a dependency's own deadline error, cancellations and deadlines mid-wait, and budget withdrawals, deposits and idle time, compared with a model of the README that replays the injected random source) and concurrent_calls_are_linearizable (3 points: a shared retry budget used by four goroutines at once). Points move from max_attempts_counts_the_first_try (9 to 8), delay_ceiling_doubles_up_to_the_cap (8 to 7), do_sleeps_the_backoff_between_attempts (7 to 6), full_jitter_spreads_delays_over_the_window (8 to 7), retries_across_workers_do_not_synchronise (6 to 5), deadline_is_never_crossed (9 to 8), cancellation_stops_retrying (9 to 8), client_errors_are_never_retried (8 to 7) and retry_after_is_honoured_within_the_deadline (7 to 6)."},
	{Level: 24, Date: "2026-12-02", Labs: []int{8}, Change: "A model case: random_call_sequences_follow_the_rules (6 points) compares generated runs of workers, crashes before or after each load, commit, effect and apply, storage and effect failures before or after they land, panicking steps, cancellations, deadlines, zombie processes with older tokens, and direct Commit and Load calls, with a model of the README. Points move from resumes_after_a_crash_at_every_point (10 to 8), checkpoint_only_after_the_effect_is_durable (11 to 9) and recorded_values_are_replayed (11 to 9). R9 now says what a panicking Effect means: the step has failed, and Run may recover the panic and return an error or let it go on to its caller; either way nothing of that step is applied or marked done."},
	{Level: 25, Date: "2026-12-02", Labs: []int{9}, Change: "Two model cases: random_call_sequences_follow_the_rules (6 points: generated Submit, Take, Done and ForecastBacklog calls with options at their limits, colliding tenants, held and failing claims, contexts whose deadline falls 1 ns before, at or after MaxWait, and the clock moved around every waiter's end, with Stats compared after every step) and concurrent_calls_are_linearizable (4 points: four clients at once on a small queue). Points move from options_and_defaults (6 to 5), full_queue_refuses_at_once (8 to 7), offered_load_does_not_grow_the_queue (8 to 7), jobs_come_out_oldest_first_once (6 to 5), full_queue_waits_only_until_a_deadline (9 to 8), admission_before_the_claim (9 to 8), concurrent_submits_never_exceed_capacity (7 to 6), noisy_tenant_cannot_starve_others (9 to 8), oldest_age_not_only_depth (8 to 7) and backlog_arithmetic (8 to 7). R7 now says that tenant names are told apart byte for byte."},
	{Level: 26, Date: "2026-12-02", Labs: []int{4}, Change: "concurrent_calls_are_linearizable (3 points) needs the race detector, like retry_budget_is_safe_for_concurrent_use: without it, whether a budget without a lock shows a lost token varied from run to run, so the case could score a wrong budget 3 one run and 0 the next. Without the race detector its pass is now \"not exercised\" and earns nothing; with it, nothing changes."},
	{Level: 27, Date: "2026-12-03", Labs: []int{4}, Change: "retry_budget_is_safe_for_concurrent_use runs its rounds under the suite's scheduler too: sync and sync/atomic in the lab's files are the kit's scheduled copies (same API, same line numbers), and each Load, Add, CompareAndSwap, Lock and Unlock is a point where another caller may run, drawn from the seed. A budget that checks its count and then changes it in two atomic steps (Load, then Add) now loses that case's points on every run."},
	{Level: 28, Date: "2026-12-03", Labs: []int{1, 4}, Change: "simultaneous_claims_execute_once schedules a store's sync.Map and sync/atomic operations as it did its Lock and Unlock calls: sync and sync/atomic in the lab's files are the kit's scheduled copies (same API, same line numbers), and each Load, Store, LoadOrStore, CompareAndSwap, Lock and Unlock is a point where another caller may run, drawn from the seed. A store that claims by a Load and then a Store (on a sync.Map or an atomic) now loses that case's points on every run, not only when the machine happens to interleave it. In lab 04, the budget case's drain is bounded: a budget that counts below zero fails that case with its counts instead of a timeout (the same points). large_retry_numbers_do_not_overflow also sweeps Ceiling(0..70) for odd Bases (1, 3, 5, 7 ns and others) under the largest Cap: a shift that wraps to a positive number (5ns·2⁶² wraps to 2⁶²) slipped past a sign test, and now loses that case's points."},
	{Level: 29, Date: "2026-12-03", Labs: []int{3}, Change: "cancelled_context_is_no_answer adds a throttle whose Retry-After (an hour) outlasts the delivery's 10-minute deadline: a worker that waits it out with time.Sleep, past its ctx, now loses that case's points (R9: it returns when ctx is done at the latest). R9 now says that a throttle binds the calls of its own delivery only, and every case judges it so, as the model case already did: a later delivery need not wait out an earlier delivery's Retry-After."},
	{Level: 30, Date: "2026-12-03", Labs: []int{5, 7}, Change: "lab 05: every_delivery_gets_a_new_token also leases tasks x1 and x (x eleven times): a token made by joining a task's ID and a count with no separator gives both the token x11, and now loses that case's points (R4). worker_acks_success_and_releases_failure adds a task delivered twice before to other workers: a worker that passes Backoff its own count of failures instead of the lease's Attempt now loses that case's points (R15). worker_shuts_down_cleanly adds a handler that winds down slowly once cancelled: a Run that returns before its handlers have returned now loses that case's points (R16). Lab 07: enqueue_checks_task_ids enqueues a task whose ID is one space: a queue that refuses blank IDs as if they were empty now loses that case's points (R2)."},
	{Level: 31, Date: "2026-12-03", Labs: []int{1, 8}, Change: "lab 01: failed_execution_releases_key also has four workers fail and retry keys of their own at once, for real and under the race detector: a store that releases a failed key outside its lock now loses that case's points (R5, and the README's safe for concurrent use). Lab 08: store_check_and_write_are_one_step adds a third commit that arrives while a second, woken when the first finished, is between its check and its write: a per-task lock dropped from its map while a commit still waits on it now loses that case's points (R1)."},
	{Level: 32, Date: "2026-12-03", Labs: []int{10}, Change: "a_lost_reply_is_retried_with_the_same_key's lost reply now wraps context.DeadlineExceeded, as the provider's own response timeout does: a Work that takes any deadline error for its own context being done now loses that case's points (R16). permanent_errors_and_lost_leases_stop_the_work adds an account the provider refuses (ErrUnauthorized): a Work that counts only ErrInvalidRequest as permanent now loses that case's points (R16). the_engine_runs_each_step_once_in_order adds jobs x and \"x \" with the same document (R15: keys from a trimmed ID). failure_retries_after_exponential_backoff adds a failure after a crashed delivery, which waits BaseBackoff*2, not BaseBackoff (R7: n is the delivery). submit_is_idempotent_by_job_id adds contents whose fields run on into the next one (R1: a fingerprint without separators). redis_state_outlives_the_process submits jobs named after the backend's own keys (R1, R13: a job key with no segment of its own)."},
}

// Level is the level of the newest entry: what a grade made now records.
func Level() int { return len(Entries) }

// Between returns the entries after level from and up to level to that may
// change lab's score, oldest first.
func Between(from, to, lab int) []Entry {
	var out []Entry
	for _, e := range Entries {
		if e.Level <= from || e.Level > to {
			continue
		}
		if len(e.Labs) == 0 {
			out = append(out, e)
			continue
		}
		for _, l := range e.Labs {
			if l == lab {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// String is the entry as one line: "level 3 (2026-12-02, lab 10): ...".
func (e Entry) String() string {
	scope := "every lab"
	if len(e.Labs) > 0 {
		scope = "lab"
		for i, l := range e.Labs {
			if i > 0 {
				scope += ","
			}
			scope += fmt.Sprintf(" %02d", l)
		}
	}
	return fmt.Sprintf("level %d (%s, %s): %s", e.Level, e.Date, scope, e.Change)
}
