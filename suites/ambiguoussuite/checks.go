package ambiguoussuite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// The tasks of the cases.
var (
	annContract = task.Task{ID: "task-1", Account: account, DocumentID: "contract-7", Recipient: "ann@example.com", Subject: "Please sign: contract 7"}
	annNDA      = task.Task{ID: "task-2", Account: account, DocumentID: "nda-3", Recipient: "ann@example.com", Subject: "Please sign: NDA 3"}
	bobContract = task.Task{ID: "task-3", Account: account, DocumentID: "contract-7", Recipient: "bob@example.com", Subject: "Please sign: contract 7"}
	// annResign is task-1's content again under another task id: the
	// contract has to be signed a second time.
	annResign = task.Task{ID: "task-4", Account: account, DocumentID: "contract-7", Recipient: "ann@example.com", Subject: "Please sign: contract 7"}
)

func checkHappyPath(t *testing.T, h *suites.History, newWorker constructor) {
	playAll(t, h, newWorker, &scenario{
		name:  "one task, nothing goes wrong",
		tasks: []task.Task{annContract},
		expect: func(e *env) []string {
			problems := e.expectSentOnce()
			e.mu.Lock()
			returns, deliveries, rec, crashes := e.returns[annContract.ID], e.deliveries[annContract.ID], e.records[annContract.ID], e.crashed[annContract.ID]
			e.mu.Unlock()
			if len(returns) > 0 && returns[0] != nil {
				problems = append(problems, fmt.Sprintf("Process(%s) = %v, want nil", annContract.ID, returns[0]))
			}
			if crashes == 0 && deliveries > 1 && len(returns) > 0 && returns[0] == nil {
				problems = append(problems, fmt.Sprintf("the queue delivered %s %d times, want 1: Process returned nil without acknowledging the first delivery", annContract.ID, deliveries))
			}
			if ds := e.deliveriesOf(annContract); len(ds) == 1 && rec.State == task.Sent && rec.OperationID != ds[0].Key {
				problems = append(problems, fmt.Sprintf("store.Load(%q).OperationID = %q, but the provider saw the key %q, want the operation id the request was sent with", annContract.ID, rec.OperationID, ds[0].Key))
			}
			return problems
		},
	})
}

func checkRetriesReuseKey(t *testing.T, h *suites.History, newWorker constructor) {
	oneKey := func(e *env) []string {
		problems := e.expectSentOnce()
		if keys := e.sendKeys(annContract.ID); len(keys) > 1 {
			problems = append(problems, fmt.Sprintf("Send was called with %d different idempotency keys for %s (%s), want the same key on every attempt", len(keys), annContract.ID, strings.Join(keys, ", ")))
		}
		return problems
	}
	playAll(t, h, newWorker, &scenario{
		name:  "the provider fails, throttles and fails again before it commits",
		tasks: []task.Task{annContract},
		setup: func(e *env) {
			e.p.Script(
				provider.FailBeforeCommit().On(provider.OpSend),
				provider.Throttle(20*time.Second).On(provider.OpSend),
				provider.FailBeforeCommit().On(provider.OpSend),
			)
		},
		expect: oneKey,
	}, &scenario{
		name:  "the provider commits the first Send and the worker dies before the answer; on the redelivery the provider throttles the first lookup (Retry-After 20s)",
		tasks: []task.Task{annContract},
		setup: func(e *env) {
			e.p.Script(
				provider.Throttle(20*time.Second).On(provider.OpStatus),
				provider.Throttle(20*time.Second).On(provider.OpFind),
			)
		},
		plan:   firstCall(op("Send"), crashAfter),
		expect: oneKey,
	}, &scenario{
		name:   "the provider commits the first Send and answers 504 gateway timeout at once, long before the delivery's deadline",
		tasks:  []task.Task{annContract},
		plan:   firstCall(op("Send"), timeoutAfter),
		expect: oneKey,
	}, &scenario{
		name:   "the provider commits the first Send and the connection breaks with an error the worker cannot classify",
		tasks:  []task.Task{annContract},
		plan:   firstCall(op("Send"), failAfter),
		expect: oneKey,
	}, &scenario{
		name:   "the first two Sends time out with a 504 (the first one committed), the third is answered",
		tasks:  []task.Task{annContract},
		plan:   steps(step{op("Send"), timeoutAfter}, step{op("Send"), timeoutAfter}),
		expect: oneKey,
	})
}

func checkLostResponse(t *testing.T, h *suites.History, newWorker constructor) {
	playAll(t, h, newWorker,
		&scenario{
			name:  "the provider commits the first Send and loses its response",
			tasks: []task.Task{annContract},
			setup: func(e *env) { e.p.Script(provider.LoseResponse().On(provider.OpSend)) },
		},
		&scenario{
			name:  "the first Send and the next call after it both lose their responses",
			tasks: []task.Task{annContract},
			setup: func(e *env) { e.p.Script(provider.LoseResponse().On(provider.OpSend), provider.LoseResponse()) },
		},
		&scenario{
			name:  "the provider is down (503 unavailable) for the first 25 minutes, longer than a delivery's 10-minute deadline; the queue redelivers every 5 minutes",
			tasks: []task.Task{annContract},
			setup: func(e *env) {
				now := time.Now()
				e.p.Outage(now, now.Add(25*time.Minute))
			},
			redelivery: func(bool) time.Duration { return 5 * time.Minute },
		},
	)
}

func checkCrashBeforeCall(t *testing.T, h *suites.History, newWorker constructor) {
	clean := probe(t, h, newWorker, &scenario{name: "one task, nothing goes wrong", tasks: []task.Task{annContract}})
	if clean == nil {
		return
	}
	// Every call the first process makes up to its first Send, and
	// that Send before the request leaves the process.
	var scs []*scenario
	for _, c := range clean.trace {
		if c.inc != 1 {
			break
		}
		variants := []crash{crashBefore}
		if c.op == "Save" {
			variants = append(variants, crashAfter)
		}
		for _, v := range variants {
			plan, name := crashAt(c, v)
			scs = append(scs, &scenario{name: name, tasks: []task.Task{annContract}, plan: plan})
		}
		if c.op == "Send" {
			break
		}
	}
	playAll(t, h, newWorker, scs...)
}

func checkCrashAfterCommit(t *testing.T, h *suites.History, newWorker constructor) {
	playAll(t, h, newWorker, &scenario{
		name:  "the provider commits the first Send; the worker dies before the answer arrives",
		tasks: []task.Task{annContract},
		plan:  firstCall(func(c call) bool { return c.op == "Send" }, crashAfter),
	})
}

func checkCrashAfterResponse(t *testing.T, h *suites.History, newWorker constructor) {
	playAll(t, h, newWorker, &scenario{
		name:  "the worker gets the receipt and dies at its next call, before that call takes effect",
		tasks: []task.Task{annContract},
		plan:  firstCall(func(c call) bool { return c.afterReceipt }, crashBefore),
	})
}

func checkCrashAroundAck(t *testing.T, h *suites.History, newWorker constructor) {
	recorded := func(c call) bool {
		return c.op == "Save" && (c.arg == string(task.Sent) || c.arg == string(task.Failed))
	}
	acking := func(c call) bool { return c.op == "Ack" }
	playAll(t, h, newWorker,
		&scenario{
			name:  "the worker records the outcome and dies before acknowledging",
			tasks: []task.Task{annContract},
			plan:  firstCall(recorded, crashAfter),
		},
		&scenario{
			name:  "the worker dies while acknowledging, before the queue gets the acknowledgement",
			tasks: []task.Task{annContract},
			plan:  firstCall(acking, crashBefore),
		},
		&scenario{
			name:  "the queue gets the acknowledgement and the worker dies right after",
			tasks: []task.Task{annContract},
			plan:  firstCall(acking, crashAfter),
		},
	)
}

func checkOwnKeys(t *testing.T, h *suites.History, newWorker constructor) {
	tasks := []task.Task{annContract, annNDA, bobContract}
	playAll(t, h, newWorker, &scenario{
		name:  "three tasks: contract-7 to ann, nda-3 to ann, contract-7 to bob; then task-1 again",
		tasks: tasks,
		again: []task.Task{annContract},
		expect: func(e *env) []string {
			problems := e.expectSentOnce()
			for i, a := range tasks {
				for _, b := range tasks[i+1:] {
					for _, k := range e.sendKeys(a.ID) {
						if strings.Contains(" "+strings.Join(e.sendKeys(b.ID), " ")+" ", " "+k+" ") {
							problems = append(problems, fmt.Sprintf("%s and %s were both sent with the idempotency key %q, want a different key for every task", a.ID, b.ID, k))
						}
					}
				}
			}
			return problems
		},
	}, &scenario{
		name:  "two tasks with identical content: contract-7 to ann as task-1, and again as task-4 (a contract signed a second time)",
		tasks: []task.Task{annContract, annResign},
		expect: func(e *env) []string {
			var problems []string
			ds := e.deliveriesOf(annContract)
			if len(ds) != 2 {
				problems = append(problems, fmt.Sprintf("customer %s has received %s for %s, want 2: %s and %s are two tasks, each one signing request", annContract.Recipient, plural(len(ds), "signing request"), annContract.DocumentID, annContract.ID, annResign.ID))
			}
			e.mu.Lock()
			r1, r4 := e.records[annContract.ID], e.records[annResign.ID]
			acks1, acks4 := e.acks[annContract.ID], e.acks[annResign.ID]
			e.mu.Unlock()
			if r1.OperationID != "" && r1.OperationID == r4.OperationID {
				problems = append(problems, fmt.Sprintf("store.Load(%q) and store.Load(%q) both have the operation id %s, want a different one for every task, even when two tasks have the same content", annContract.ID, annResign.ID, r1.OperationID))
			}
			for _, r := range []struct {
				id   string
				rec  task.Record
				acks int
			}{{annContract.ID, r1, acks1}, {annResign.ID, r4, acks4}} {
				if r.rec.State != task.Sent || r.rec.RequestID == "" {
					problems = append(problems, fmt.Sprintf("store.Load(%q) after the run = %s, want sent with its own request id", r.id, describeRecord(r.rec, r.rec.State != "")))
				}
				if r.acks == 0 {
					problems = append(problems, fmt.Sprintf("%s was never acknowledged", r.id))
				}
			}
			if r1.RequestID != "" && r1.RequestID == r4.RequestID {
				problems = append(problems, fmt.Sprintf("%s and %s are both recorded sent as %s, want two signing requests: the second task was taken for a retry of the first", annContract.ID, annResign.ID, r1.RequestID))
			}
			return problems
		},
	})
}

func checkInProgress(t *testing.T, h *suites.History, newWorker constructor) {
	playAll(t, h, newWorker, &scenario{
		name:  "the first Send takes the provider 3m to commit; the worker dies meanwhile and the task comes back after 1m",
		tasks: []task.Task{annContract},
		setup: func(e *env) { e.p.Script(provider.Slow(3 * time.Minute).On(provider.OpSend)) },
		plan:  firstCall(func(c call) bool { return c.op == "Send" }, crashInFlight),
		expect: func(e *env) []string {
			problems := e.expectSentOnce()
			e.mu.Lock()
			saves := append([]task.Record(nil), e.saves[annContract.ID]...)
			e.mu.Unlock()
			// Name the first wrong record, if any: it is where the worker
			// took "in progress" for an answer.
			for _, r := range saves {
				if r.State == task.Sent && r.RequestID == "" {
					return append(problems, fmt.Sprintf("store.Save(%q, {%s}) recorded the task as sent without a request id: an in-progress answer is not a receipt", annContract.ID, r))
				}
				if r.State == task.Failed {
					return append(problems, fmt.Sprintf("store.Save(%q, {%s}) recorded the task as failed: an in-progress answer is not a refusal", annContract.ID, r))
				}
			}
			return problems
		},
	})
}

// refusal is one task the provider refuses, and the error it refuses it with.
type refusal struct {
	name  string
	task  task.Task
	opts  provider.Options
	setup func(e *env)
	want  error
}

// refusals are the provider's definite refusals, one task each.
func refusals() []refusal {
	invalid := annContract
	invalid.Recipient = "ann.example.com"
	foreign := annContract
	foreign.Account = "globex"
	return []refusal{
		{
			name: "the key was already used for another request",
			task: annContract,
			setup: func(e *env) {
				e.beforeSend = func(_ context.Context, acct, key string, _ provider.SendRequest) {
					e.h.Note("another client of account %s has already used the key %s for nda-9 to bob@example.com", acct, key)
					e.p.Send(context.Background(), acct, key, provider.SendRequest{DocumentID: "nda-9", Recipient: "bob@example.com", Subject: "Please sign: NDA 9"})
				}
			},
			want: provider.ErrParameterMismatch,
		},
		{
			name: "the recipient is not an email address (ann.example.com)",
			task: invalid,
			want: provider.ErrInvalidRequest,
		},
		{
			name: "the task's account (globex) is not one the provider accepts",
			task: foreign,
			opts: provider.Options{Accounts: []string{account}},
			want: provider.ErrUnauthorized,
		},
	}
}

// expectRefused checks the end state of a refused task: one Send, nothing
// delivered, recorded failed with the reason, acknowledged, and the first
// Process call returned an error wrapping want.
func (e *env) expectRefused(tk task.Task, want error) []string {
	var problems []string
	e.mu.Lock()
	keys := append([]string(nil), e.keys[tk.ID]...)
	rec, ok := e.records[tk.ID]
	returns := append([]error(nil), e.returns[tk.ID]...)
	acks, deliveries := e.acks[tk.ID], e.deliveries[tk.ID]
	e.mu.Unlock()
	if len(keys) != 1 {
		problems = append(problems, fmt.Sprintf("Send was called %d times for %s (with the keys %s), want 1: a refusal fails the same way on every attempt, and sending under a new key hides a bug", len(keys), tk.ID, strings.Join(e.sendKeys(tk.ID), ", ")))
	}
	if n := len(e.deliveriesOf(tk)); n != 0 {
		problems = append(problems, fmt.Sprintf("customer %s has received %s for %s (%s), want 0 after the provider refused the request", tk.Recipient, plural(n, "signing request"), tk.DocumentID, tk.ID))
	}
	if len(returns) == 0 || !errors.Is(returns[0], want) {
		got := "no return (the worker crashed)"
		if len(returns) > 0 {
			got = fmt.Sprint(returns[0])
		}
		problems = append(problems, fmt.Sprintf("Process(%s) = %s, want an error wrapping %s", tk.ID, got, sentinelName(want)))
	}
	switch {
	case !ok:
		problems = append(problems, fmt.Sprintf("store.Load(%q) after the run = no record, want failed", tk.ID))
	case rec.State != task.Failed:
		problems = append(problems, fmt.Sprintf("store.Load(%q) after the run = %s, want failed", tk.ID, rec))
	case rec.Error == "":
		problems = append(problems, fmt.Sprintf("store.Load(%q) after the run = %s, want failed with the reason in Error", tk.ID, rec))
	}
	if acks == 0 {
		problems = append(problems, fmt.Sprintf("%s was delivered %d times and never acknowledged: a task that can never succeed is recorded failed and leaves the queue", tk.ID, deliveries))
	}
	return problems
}

func sentinelName(err error) string {
	switch err {
	case provider.ErrParameterMismatch:
		return "provider.ErrParameterMismatch"
	case provider.ErrInvalidRequest:
		return "provider.ErrInvalidRequest"
	case provider.ErrUnauthorized:
		return "provider.ErrUnauthorized"
	}
	return err.Error()
}

func checkRefusals(t *testing.T, h *suites.History, newWorker constructor) {
	var scs []*scenario
	for _, r := range refusals() {
		scs = append(scs, &scenario{
			name:   r.name,
			tasks:  []task.Task{r.task},
			opts:   r.opts,
			setup:  r.setup,
			expect: func(e *env) []string { return e.expectRefused(r.task, r.want) },
		})
	}
	playAll(t, h, newWorker, scs...)
}

func checkRetention(t *testing.T, h *suites.History, newWorker constructor) {
	expect := func(e *env) []string {
		problems := e.expectSentOnce()
		if ds := e.deliveriesOf(annContract); len(ds) > 1 && ds[0].Reference == "" {
			problems = append(problems, fmt.Sprintf("the first signing request of %s carried no Reference: after the key is forgotten, Find(reference) is the only way to learn that it was sent", annContract.ID))
		}
		return problems
	}
	playAll(t, h, newWorker,
		&scenario{
			name:       "the provider commits the first Send, the worker dies before the answer, and the task comes back after 25h",
			tasks:      []task.Task{annContract},
			plan:       firstCall(func(c call) bool { return c.op == "Send" }, crashAfter),
			redelivery: afterCrash(25 * time.Hour),
			expect:     expect,
		},
		&scenario{
			name:       "the worker dies just before its first Send, and the task comes back after 25h",
			tasks:      []task.Task{annContract},
			plan:       firstCall(func(c call) bool { return c.op == "Send" }, crashBefore),
			redelivery: afterCrash(25 * time.Hour),
			expect:     expect,
		},
		&scenario{
			name:       "the provider commits the first Send, the worker dies before the answer, and the task comes back after 8 days",
			tasks:      []task.Task{annContract},
			plan:       firstCall(op("Send"), crashAfter),
			redelivery: afterCrash(8 * 24 * time.Hour),
			expect:     expect,
		},
		&scenario{
			name:       "the provider commits the first Send, the worker dies before the answer; 25h later the first lookup fails with a broken connection",
			tasks:      []task.Task{annContract},
			plan:       steps(step{op("Send"), crashAfter}, step{opOf(2, "Find"), failBefore}),
			redelivery: afterCrash(25 * time.Hour),
			expect:     expect,
		},
		&scenario{
			name:       "the provider commits the first Send, the worker dies before the answer; 25h later the provider refuses the first lookup, 401 unauthorized (a rotated API token), and answers the next one",
			tasks:      []task.Task{annContract},
			plan:       steps(step{op("Send"), crashAfter}, step{lookupOf(2), refuseBefore}),
			redelivery: afterCrash(25 * time.Hour),
			expect: func(e *env) []string {
				problems := expect(e)
				e.mu.Lock()
				saves := append([]task.Record(nil), e.saves[annContract.ID]...)
				e.mu.Unlock()
				for _, r := range saves {
					if r.State == task.Failed {
						return append(problems, fmt.Sprintf("store.Save(%q, {%s}) recorded the task as failed after the provider refused a lookup: a refused Find or Status says nothing about the Send it asks about, so the task stays pending", annContract.ID, r))
					}
				}
				return problems
			},
		},
		&scenario{
			name:       "the provider commits the first Send, the worker dies before the answer; 25h later the provider answers the first lookup 503 unavailable",
			tasks:      []task.Task{annContract},
			setup:      func(e *env) { e.p.Script(provider.FailBeforeCommit().On(provider.OpFind)) },
			plan:       firstCall(op("Send"), crashAfter),
			redelivery: afterCrash(25 * time.Hour),
			expect:     expect,
		},
	)
}

func checkRandomCrashes(t *testing.T, h *suites.History, newWorker constructor) {
	seed := suites.Seed(t)
	var tasks []task.Task
	for i, r := range []string{"ann", "bob", "cem", "dee"} {
		tasks = append(tasks, task.Task{
			ID:         fmt.Sprintf("task-%d", i+1),
			Account:    account,
			DocumentID: fmt.Sprintf("contract-%d", 10+i),
			Recipient:  r + "@example.com",
			Subject:    fmt.Sprintf("Please sign: contract %d", 10+i),
		})
	}
	playAll(t, h, newWorker, &scenario{
		name:       fmt.Sprintf("four tasks, random crashes and provider faults, seed %d", seed),
		tasks:      tasks,
		seed:       seed,
		maxCrashes: 8,
		setup: func(e *env) {
			e.p.SetChaos(provider.Chaos{
				Seed:             seed,
				FailBeforeCommit: 0.1,
				LoseResponse:     0.1,
				Throttle:         0.05,
				Slow:             0.05,
				Latency:          20 * time.Second,
				RetryAfter:       2 * time.Second,
			})
		},
		plan: func(e *env, c call) crash {
			switch x := e.rng.Float64(); {
			case x < 0.15:
				return []crash{crashBefore, crashAfter, crashInFlight}[e.rng.IntN(3)]
			case x < 0.20:
				// A live process meets a failing call or a shutdown.
				return []crash{failBefore, failAfter, cancelBefore}[e.rng.IntN(3)]
			}
			return noCrash
		},
	})
}

func checkFailingCalls(t *testing.T, h *suites.History, newWorker constructor) {
	// The calls of a first delivery, and of a redelivery after the worker
	// died right after its first Send committed: every one of them, by a
	// process that stays alive, fails once with an ordinary error.
	clean := probe(t, h, newWorker, &scenario{name: "one task, nothing goes wrong", tasks: []task.Task{annContract}})
	if clean == nil {
		return
	}
	afterCommit := firstCall(op("Send"), crashAfter)
	redelivered := probe(t, h, newWorker, &scenario{
		name:  "the provider commits the first Send; the worker dies before the answer arrives",
		tasks: []task.Task{annContract},
		plan:  afterCommit,
	})
	if redelivered == nil {
		return
	}
	var scs []*scenario
	add := func(c call, prefix []step, what string) {
		variants := []crash{failBefore}
		if c.op == "Save" || c.op == "Ack" || c.op == "Send" {
			variants = append(variants, failAfter)
		}
		for _, v := range variants {
			how := "fails with an ordinary error and has no effect"
			if v == failAfter {
				how = "takes effect, then fails with an ordinary error"
			}
			target := c
			match := func(c call) bool { return c.inc == target.inc && c.seq == target.seq }
			scs = append(scs, &scenario{
				name:  fmt.Sprintf("%scall #%d of worker #%d, %s, %s", what, c.seq, c.inc, c, how),
				tasks: []task.Task{annContract},
				plan:  steps(append(append([]step(nil), prefix...), step{match, v})...),
			})
		}
	}
	for _, c := range clean.trace {
		if c.inc == 1 {
			add(c, nil, "")
		}
	}
	for _, c := range redelivered.trace {
		if c.inc == 2 {
			add(c, []step{{op("Send"), crashAfter}}, "after a crash right after the first Send committed: ")
		}
	}
	if len(scs) == 0 {
		suites.Inconclusive(t, "the worker made no calls to its dependencies")
	}
	playAll(t, h, newWorker, scs...)
}

func checkCancelled(t *testing.T, h *suites.History, newWorker constructor) {
	neverFailed := func(e *env) []string {
		problems := e.expectSentOnce()
		e.mu.Lock()
		saves := append([]task.Record(nil), e.saves[annContract.ID]...)
		e.mu.Unlock()
		for _, r := range saves {
			if r.State == task.Failed {
				return append(problems, fmt.Sprintf("store.Save(%q, {%s}) recorded the task as failed: a cancelled context is the worker giving up, not the provider refusing", annContract.ID, r))
			}
		}
		return problems
	}
	scs := []*scenario{{
		name:  "the provider commits the first Send and, at that moment, the delivery's context is cancelled (a graceful shutdown); the worker lives on",
		tasks: []task.Task{annContract},
		setup: func(e *env) {
			e.p.OnCommit(func(provider.Delivery) {
				e.p.OnCommit(nil)
				e.mu.Lock()
				cancel := e.cancel
				e.mu.Unlock()
				e.h.Record("queue", "cancels the delivery's context", "right after the provider committed the request: the worker is shutting down")
				cancel()
			})
		},
		expect: neverFailed,
	}, {
		// R9: the worker returns when ctx is done at the latest, also
		// while it waits out a throttle: a wait that ignores ctx keeps
		// the delivery past its deadline (the harness replaces a process
		// still running a minute after it).
		name:  fmt.Sprintf("the provider throttles the first Send with Retry-After 1h, longer than the delivery's %v deadline; the worker lives on", lease),
		tasks: []task.Task{annContract},
		setup: func(e *env) {
			e.p.Script(provider.Throttle(time.Hour).On(provider.OpSend))
		},
		expect: neverFailed,
	}}
	clean := probe(t, h, newWorker, &scenario{name: "one task, nothing goes wrong", tasks: []task.Task{annContract}})
	if clean == nil {
		return
	}
	for _, c := range clean.trace {
		if c.inc != 1 {
			continue
		}
		target := c
		scs = append(scs, &scenario{
			name:   fmt.Sprintf("the delivery's context is cancelled just before call #%d, %s; the worker lives on", c.seq, c),
			tasks:  []task.Task{annContract},
			plan:   steps(step{func(c call) bool { return c.inc == target.inc && c.seq == target.seq }, cancelBefore}),
			expect: neverFailed,
		})
	}
	playAll(t, h, newWorker, scs...)
}

func checkSettled(t *testing.T, h *suites.History, newWorker constructor) {
	onlyAcked := func(tk task.Task, refused error) func(e *env) []string {
		return func(e *env) []string {
			var problems []string
			if refused == nil {
				problems = e.expectSentOnce()
			} else {
				problems = e.expectRefused(tk, refused)
			}
			e.mu.Lock()
			before, after := e.sendsUntil[tk.ID], len(e.keys[tk.ID])
			late := append([]error(nil), e.lateReturn[tk.ID]...)
			acks := e.acks[tk.ID]
			e.mu.Unlock()
			if after > before {
				problems = append(problems, fmt.Sprintf("the late duplicate of %s made %s, want none: the task's outcome was recorded, so a delivery only acknowledges it", tk.ID, plural(after-before, "Send")))
			}
			if acks < 2 {
				problems = append(problems, fmt.Sprintf("the late duplicate of %s was not acknowledged, want it acknowledged: its outcome is recorded, so it leaves the queue", tk.ID))
			}
			if len(late) > 0 {
				switch {
				case refused == nil && late[0] != nil:
					problems = append(problems, fmt.Sprintf("Process(%s) for the late duplicate = %v, want nil: the task is sent", tk.ID, late[0]))
				case refused != nil && late[0] == nil:
					problems = append(problems, fmt.Sprintf("Process(%s) for the late duplicate = nil, want an error: the task was refused", tk.ID))
				}
			}
			return problems
		}
	}
	var scs []*scenario
	for _, after := range []time.Duration{25 * time.Hour, 8 * 24 * time.Hour} {
		scs = append(scs, &scenario{
			name:       fmt.Sprintf("task-1 is sent and acknowledged; the queue delivers it again %v later", after),
			tasks:      []task.Task{annContract},
			again:      []task.Task{annContract},
			againAfter: after,
			expect:     onlyAcked(annContract, nil),
		})
	}
	for _, r := range refusals()[:2] {
		for _, after := range []time.Duration{time.Hour, 25 * time.Hour} {
			scs = append(scs, &scenario{
				name:       fmt.Sprintf("%s: refused, recorded failed and acknowledged; the queue delivers it again %v later", r.name, after),
				tasks:      []task.Task{r.task},
				opts:       r.opts,
				setup:      r.setup,
				again:      []task.Task{r.task},
				againAfter: after,
				expect:     onlyAcked(r.task, r.want),
			})
		}
	}
	playAll(t, h, newWorker, scs...)
}
