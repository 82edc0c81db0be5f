package checkpoint

import "context"

// Runner runs multi-step tasks from their last checkpoint. It holds one
// fencing token, the token of its grant of the task it runs, and every
// checkpoint it commits carries it. A Runner runs one task at a time (Run
// is not called again before it returns); Progress may be called at any
// time, from any goroutine. Build it with NewRunner.
type Runner struct {
	// TODO: the options, and the progress (safe to read while Run runs).
}

// NewRunner returns a runner that commits to opts.Store, applies effects
// to opts.Sink and fences its checkpoints with opts.Token. A nil Store or
// Sink, or a zero Token, is an error wrapping ErrInvalidRunner. A nil Now
// means time.Now, a nil Rand means math/rand/v2's Uint64.
func NewRunner(opts Options) (*Runner, error) {
	// TODO: implement. Start with the README's "What to implement".
	return nil, ErrNotImplemented
}

// Run runs the steps of taskID from its last checkpoint: the steps the
// checkpoint marks done are not run again. For each step in turn, Run
// computes its effect, commits the values the step drew (if it drew any
// new ones) before applying the effect, applies the effect under the step's
// key (taskID + "/" + the step's index), and commits the checkpoint that
// marks the step done once the effect is durable. It returns nil when
// every step is done.
//
// Run stops at the first error, and returns it wrapped: a failed Load,
// Commit, Apply or step. A refused commit (ErrStaleToken), or a stored
// checkpoint whose token is higher than the runner's, means another runner
// owns the task now: Run stops at once, having applied nothing more. Run
// checks ctx before it starts and before each step; once a step's effect
// is applied, its checkpoint is committed even if ctx is done by then.
func (r *Runner) Run(ctx context.Context, taskID string, steps []Step) error {
	return ErrNotImplemented
}

// Progress returns how far the runner has taken its task: the task, its
// number of steps, the steps known to be committed, the step it resumed
// from, and whether Run is running. Before the first Run it is the zero
// Progress.
func (r *Runner) Progress() Progress {
	return Progress{}
}
