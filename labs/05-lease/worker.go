package lease

import "context"

// Worker takes tasks from a LeaseQueue and runs a Handler on each, at most
// Capacity at a time, keeping each task's lease alive while its handler
// works. Build it with NewWorker; Run runs it.
type Worker struct {
	// TODO: what a worker needs: the queue, its options, the handler.
}

// NewWorker returns a worker named opts.Name that takes tasks from q and
// runs handle on each. opts.Capacity is how many tasks it works on at once
// (zero or less means 1); opts.PollInterval is how long it waits after the
// queue had no visible task (zero or less means one second); opts.Backoff
// is how long a failed task stays invisible, given its attempt (nil means
// it is released at once).
func NewWorker(q LeaseQueue, opts WorkerOptions, handle Handler) *Worker {
	// TODO: keep what Run needs; apply the defaults.
	return &Worker{}
}

// Run leases tasks and works on them until ctx is done or the queue fails.
//
//   - It calls Lease only when fewer than Capacity tasks are being worked
//     on, so it never holds a lease it has no room to work on. When the
//     queue has no visible task it waits PollInterval before asking again.
//   - Each task's handler runs in a goroutine of its own. While it runs,
//     the worker renews the lease at the latest when half of its length
//     has passed, for the same length, so work may take longer than the
//     visibility timeout.
//   - The handler's ctx is cancelled as soon as the lease is lost: when
//     Extend says ErrLeaseLost, or when a renewal has not succeeded by the
//     time the lease ends. The worker then neither acknowledges nor
//     releases the task: it is someone else's.
//   - A handler that returns nil gets its task acknowledged; one that
//     returns an error gets it released for another delivery after
//     opts.Backoff of the lease's Attempt, Nack(token,
//     opts.Backoff(l.Attempt)), or at once, Nack(token, 0), when Backoff is
//     nil. ErrLeaseLost from Ack or Nack is not an error of the worker.
//   - Any other error from the queue stops the worker: Run stops leasing,
//     cancels the running handlers, waits for them and returns an error
//     wrapping the queue's. When ctx is done, Run stops leasing, cancels
//     the handlers, waits for them, acknowledges or releases their tasks as
//     above, and returns an error wrapping ctx.Err().
func (w *Worker) Run(ctx context.Context) error {
	// TODO: implement. Start with the README's "What to implement".
	return ErrNotImplemented
}
