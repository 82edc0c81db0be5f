package checkpointsuite

import "github.com/fourth-outcome/labkit/suites"

// Lab is the rubric of lab 08: its concepts and cases.
var Lab = suites.Lab{
	Number:   8,
	Slug:     "checkpoint",
	Title:    "Checkpointed resumption",
	TestName: "TestCheckpoint",
	Concepts: concepts,
	Cases:    suites.Cases(tests),
}

const docs = "docs/08-checkpoint.md"

var concepts = []suites.Concept{
	{
		ID:            "durable-progress",
		Title:         "Resume from the last checkpoint",
		Misconception: "After a crash it is simplest and safe enough to run the task again from the first step.",
		Hint:          "Load the task's checkpoint first and start at its Next: the steps before it are done and their effects are durable. A task with no checkpoint starts at 0; a finished one runs nothing.",
		Docs:          docs + "#resume-from-the-last-checkpoint",
	},
	{
		ID:            "effect-then-checkpoint",
		Title:         "The checkpoint follows the durable effect",
		Misconception: "Marking a step done before doing it is fine, because the step is about to run anyway.",
		Hint:          "A checkpoint is a promise that the step's effect is durable. Commit Next = i+1 only after Apply of step i returned nil; if anything fails or the process dies before that, the checkpoint must still say step i.",
		Docs:          docs + "#the-checkpoint-follows-the-durable-effect",
	},
	{
		ID:            "idempotent-steps",
		Title:         "One key per step, derived from the task",
		Misconception: "Any unique key makes an effect idempotent, so a fresh one per attempt is the safest.",
		Hint:          "The step run again after a crash must send the key the first run sent, whoever runs it: derive it from the task ID and the step index only, as the README spells it.",
		Docs:          docs + "#one-key-per-step-derived-from-the-task",
	},
	{
		ID:            "replay-values",
		Title:         "Recorded values are replayed",
		Misconception: "A step that runs again can simply ask for the time or a random number again; it is the same step.",
		Hint:          "Values a step drew shaped an effect that may already be out in the world. Commit them before the effect is applied, and hand them back, in order, whenever that step runs again.",
		Docs:          docs + "#recorded-values-are-replayed",
	},
	{
		ID:            "fenced-checkpoints",
		Title:         "Checkpoint writes are fenced",
		Misconception: "Only one runner works on a task at a time, so the store can take every checkpoint it is given.",
		Hint:          "A paused runner wakes up after another took its task over. The store must compare tokens atomically with the write and refuse a lower one; the runner must stop at once when it is refused.",
		Docs:          docs + "#checkpoint-writes-are-fenced",
	},
	{
		ID:            "visible-progress",
		Title:         "Progress is visible",
		Misconception: "Progress is a detail for logs; nobody needs to read it while the task runs.",
		Hint:          "An operator must be able to tell, at any moment, which step a task is on, how many are done and where it resumed from, without waiting for a slow step: keep the progress under its own small lock, never held across a call.",
		Docs:          docs + "#progress-is-visible",
	},
	{
		ID:            "runner-contract",
		Title:         "Options, errors and contexts",
		Misconception: "Errors from the store or the effect service are rare, so logging them and carrying on is enough.",
		Hint:          "Check the options in NewRunner. Return every failure wrapped and stop at once: a failure you swallow becomes a step marked done that never happened. Check the context before each step, and commit a durable effect's checkpoint even if the caller has given up.",
		Docs:          docs + "#options-errors-and-contexts",
	},
	{
		ID:            "model-sequences",
		Title:         "Every rule holds after any sequence of crashes and faults",
		Misconception: "If my runner survives the crashes I thought of, it survives any crash, failure or cancellation at any step, in any order.",
		Hint:          "Read the timeline from the top: it is the shortest sequence of runs found that breaks a rule. At each call, what does the durable checkpoint say, which step is your runner on, which values has it committed, and what did the last call answer?",
		Docs:          docs + "#worked-example-three-crashes-one-task",
	},
}

// tests are the cases, in the order they run.
var tests = []suites.Test[*target]{
	{
		Case: suites.Case{
			Name:        "options_are_checked",
			Concept:     "runner-contract",
			Rules:       []string{"R3"},
			Points:      4,
			Explanation: "NewRunner refuses a missing store, a missing effect sink and the zero token; with no clock and no random source given, a step gets the real time (virtual here) at the moment it draws, not when the runner was built, and a random number, and gets them back when it runs again; another runner with the default source draws another number (no fixed seed).",
		},
		Check: checkOptions,
	},
	{
		Case: suites.Case{
			Name:        "runs_every_step_once_in_order",
			Concept:     "durable-progress",
			Rules:       []string{"R4", "R5"},
			Points:      8,
			Explanation: "A new task runs from step 0, each step once and in order, and ends with a checkpoint that says it is done; run again, a finished task runs nothing. Zero steps run nothing and write nothing, one step is one effect, and a task without an ID is refused.",
		},
		Check: checkRunsInOrder,
	},
	{
		Case: suites.Case{
			Name:        "resumes_after_a_crash_at_every_point",
			Concept:     "durable-progress",
			Rules:       []string{"R4", "R5", "R6", "R7"},
			Points:      8,
			Explanation: "The process dies at each point of each step (while it computes, around the commit of its values, around its effect, around its checkpoint), and a new one resumes an hour later: in every case each effect happens exactly once, with the payload the first run computed, and the task ends done.",
		},
		Check: checkCrashAtEveryPoint,
	},
	{
		Case: suites.Case{
			Name:        "completed_steps_are_not_run_again",
			Concept:     "durable-progress",
			Rules:       []string{"R4"},
			Points:      8,
			Explanation: "A runner that resumes a task whose checkpoint says step 2 of 4 computes and applies steps 2 and 3 only: the steps before the checkpoint are done, and running them again repeats work (and, without idempotency, effects). A checkpoint one step from the end runs exactly the last step. A task that gained a step between runs runs the new steps too, and its checkpoint's Total is this Run's number of steps.",
		},
		Check: checkNotRunAgain,
	},
	{
		Case: suites.Case{
			Name:        "step_keys_are_derived_from_the_task",
			Concept:     "idempotent-steps",
			Rules:       []string{"R5"},
			Points:      7,
			Explanation: "Step i of task T is applied under the key T/i, the same key on every run by every runner, so the effect service can tell a repeat from a new effect; tasks with multi-byte IDs and tasks whose IDs are prefixes of each other get keys of their own.",
		},
		Check: checkKeys,
	},
	{
		Case: suites.Case{
			Name:        "checkpoint_only_after_the_effect_is_durable",
			Concept:     "effect-then-checkpoint",
			Rules:       []string{"R6", "R9"},
			Points:      9,
			Explanation: "When a step's effect is applied, the durable checkpoint still says that step; when the effect service fails (before or after performing the effect, or refuses the payload with ErrEffectMismatch) Run returns its error and the checkpoint stays at the step, so a later run applies it. A checkpoint written before the effect skips the step forever if the process dies in between.",
		},
		Check: checkCheckpointAfterEffect,
	},
	{
		Case: suites.Case{
			Name:        "recorded_values_are_replayed",
			Concept:     "replay-values",
			Rules:       []string{"R7"},
			Points:      9,
			Explanation: "The times and random numbers a step drew are durable before its effect is applied, and a run of the step after a crash (an hour, or a week, later, with another runner's random source) gets the same values in the same order, so it sends the same payload under the same key; the checkpoint keeps each value once, with its step.",
		},
		Check: checkReplay,
	},
	{
		Case: suites.Case{
			Name:        "zombie_checkpoint_is_rejected",
			Concept:     "fenced-checkpoints",
			Rules:       []string{"R1", "R8"},
			Points:      10,
			Explanation: "A runner pauses inside a step's effect (or just before committing a step's values); a runner with a higher token resumes and finishes the task; the paused one wakes up. Its checkpoint must be refused, and it must stop at once with ErrStaleToken, applying nothing more: the task's checkpoint never moves backwards. A runner that finds a higher token in the checkpoint it loads stops before running anything.",
		},
		Check: checkZombie,
	},
	{
		Case: suites.Case{
			Name:        "store_fences_every_commit",
			Concept:     "fenced-checkpoints",
			Rules:       []string{"R1"},
			Points:      6,
			Explanation: "The store accepts a checkpoint whose token is at least the task's (an equal token is the same runner's next step) and refuses a lower token or the zero token with ErrStaleToken, changing nothing; tasks are fenced independently; Load returns the checkpoint exactly as committed, a copy that a caller changing its own Values (after Commit or after Load) cannot alter.",
		},
		Check: checkStoreFences,
	},
	{
		Case: suites.Case{
			Name:        "store_check_and_write_are_one_step",
			Concept:     "fenced-checkpoints",
			Rules:       []string{"R1"},
			Points:      4,
			Explanation: "While the store reads a task's checkpoint to check a commit with token 5, a commit with token 6 arrives: it must wait, or the commit with 5, already checked, lands after it and moves the task backwards. The same holds for a commit that arrives while a second one, woken when the first finished, is between its check and its write.",
		},
		Check: checkStoreAtomic,
	},
	{
		Case: suites.Case{
			Name:        "failures_are_returned_not_swallowed",
			Concept:     "runner-contract",
			Rules:       []string{"R2", "R9"},
			Points:      7,
			Explanation: "A failed read or write of the durable storage, a failed commit, a failed load and a failed step each come back from Run (and from the store) wrapped, and Run stops there: no later step, no effect without its values durable, no start from step 0 because the checkpoint could not be read.",
		},
		Check: checkFailures,
	},
	{
		Case: suites.Case{
			Name:        "progress_is_visible",
			Concept:     "visible-progress",
			Rules:       []string{"R10"},
			Points:      5,
			Explanation: "While a step's effect is slow, Progress answers at once with the task, its number of steps, the steps committed (those before the resume included, from the first resumed step on), the step it resumed from and that it is running; after Run returns it says how far it got and that it stopped.",
		},
		Check: checkProgress,
	},
	{
		Case: suites.Case{
			Name:        "cancelled_context_at_every_point",
			Concept:     "runner-contract",
			Rules:       []string{"R11"},
			Points:      5,
			Explanation: "With a done context Run does nothing, even with zero steps or no task ID (the context comes first); cancelled while a step computes, it applies nothing more; cancelled while an effect succeeds, it still commits that step's checkpoint and stops; a deadline passing on virtual time counts the same, also during a step that draws no values (so no commit of values stops the runner for it). A cancelled commit after a durable effect would repeat the step.",
		},
		Check: checkCancel,
	},
	{
		Case: suites.Case{
			Name:        "concurrent_runners_one_makes_progress",
			Concept:     "fenced-checkpoints",
			Rules:       []string{"R1", "R8", "R10"},
			Points:      4,
			Explanation: "Four runners with tokens 1 to 4 resume one task at once while an operator reads their progress: every effect happens once, the checkpoint's token never goes back (nor a runner's step), each runner finishes or stops with ErrStaleToken, and the task ends done.",
		},
		Check: checkConcurrentRunners,
	},
	{
		Case: suites.Case{
			Name:        "random_call_sequences_follow_the_rules",
			Concept:     "model-sequences",
			Rules:       []string{"R1", "R2", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11"},
			Points:      6,
			Explanation: "Generated sequences of worker processes running tasks, one at a time, each with at most one fault at a drawn point of a drawn step (the process crashing before or after a call, the storage under the store failing before or after its write, the effect service failing before or after performing the effect, the context cancelled or its deadline passing, the step failing or panicking), restarts with the next token, the same token or an older one, hours or a week later, a process paused before a call that wakes up after a newer one committed the task, and a caller committing and loading odd task IDs directly and changing the Values it gave or got: every call the runner makes, every answer of the store and what Run returns follow the rules. A failing sequence is shortened to the fewest steps that still break a rule.",
		},
		Model: checkModelSequences,
	},
}
