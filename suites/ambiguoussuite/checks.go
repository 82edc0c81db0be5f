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
	playAll(t, h, newWorker, &scenario{
		name:  "the provider fails, throttles and fails again before it commits",
		tasks: []task.Task{annContract},
		setup: func(e *env) {
			e.p.Script(
				provider.FailBeforeCommit().On(provider.OpSend),
				provider.Throttle(2*time.Second).On(provider.OpSend),
				provider.FailBeforeCommit().On(provider.OpSend),
			)
		},
		expect: func(e *env) []string {
			problems := e.expectSentOnce()
			if keys := e.sendKeys(annContract.ID); len(keys) > 1 {
				problems = append(problems, fmt.Sprintf("Send was called with %d different idempotency keys for %s (%s), want the same key on every attempt", len(keys), annContract.ID, strings.Join(keys, ", ")))
			}
			return problems
		},
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

func checkMismatch(t *testing.T, h *suites.History, newWorker constructor) {
	playAll(t, h, newWorker, &scenario{
		name:  "the key was already used for another request",
		tasks: []task.Task{annContract},
		setup: func(e *env) {
			e.beforeSend = func(_ context.Context, acct, key string, _ provider.SendRequest) {
				e.h.Note("another client of account %s has already used the key %s for nda-9 to bob@example.com", acct, key)
				e.p.Send(context.Background(), acct, key, provider.SendRequest{DocumentID: "nda-9", Recipient: "bob@example.com", Subject: "Please sign: NDA 9"})
			}
		},
		expect: func(e *env) []string {
			var problems []string
			e.mu.Lock()
			keys := append([]string(nil), e.keys[annContract.ID]...)
			rec, ok := e.records[annContract.ID]
			returns := append([]error(nil), e.returns[annContract.ID]...)
			acks, deliveries := e.acks[annContract.ID], e.deliveries[annContract.ID]
			e.mu.Unlock()
			if len(keys) != 1 {
				problems = append(problems, fmt.Sprintf("Send was called %d times for %s (with the keys %s), want 1: a parameter mismatch fails the same way on every attempt, and sending under a new key hides a bug", len(keys), annContract.ID, strings.Join(e.sendKeys(annContract.ID), ", ")))
			}
			if n := len(e.deliveriesOf(annContract)); n != 0 {
				problems = append(problems, fmt.Sprintf("customer %s has received %s for %s (%s), want 0 after the provider refused the request", annContract.Recipient, plural(n, "signing request"), annContract.DocumentID, annContract.ID))
			}
			if len(returns) == 0 || !errors.Is(returns[0], provider.ErrParameterMismatch) {
				got := "no return (the worker crashed)"
				if len(returns) > 0 {
					got = fmt.Sprint(returns[0])
				}
				problems = append(problems, fmt.Sprintf("Process(%s) = %s, want an error wrapping provider.ErrParameterMismatch", annContract.ID, got))
			}
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("store.Load(%q) after the run = no record, want failed", annContract.ID))
			case rec.State != task.Failed:
				problems = append(problems, fmt.Sprintf("store.Load(%q) after the run = %s, want failed", annContract.ID, rec))
			}
			if acks == 0 {
				problems = append(problems, fmt.Sprintf("%s was delivered %d times and never acknowledged: a task that can never succeed is recorded failed and leaves the queue", annContract.ID, deliveries))
			}
			return problems
		},
	})
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
			if e.rng.Float64() >= 0.15 {
				return noCrash
			}
			return []crash{crashBefore, crashAfter, crashInFlight}[e.rng.IntN(3)]
		},
	})
}
