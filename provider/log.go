package provider

import (
	"fmt"
	"strings"
	"time"
)

// Event is one line of the provider's log: what it decided about a call, or
// a change of its configuration. A test prints the log as a timeline when it
// fails:
//
//	t=3s account acme key op-1 Send [lose-response] -> committed sr_000001 (document contract-7 to ann@example.com), response lost
type Event struct {
	// At is the time since New, on the time package's clock (virtual
	// time inside a bubble).
	At time.Duration

	// Op is the operation, or "" for a configuration event (chaos with its
	// seed, an outage, a slowdown).
	Op      Op
	Account string
	Key     string

	// Fault is the injected fault the call drew, FaultNone if none.
	Fault FaultKind

	// Outcome says what the provider did: "committed sr_000001 (...)",
	// "replayed sr_000001 (no new delivery)", "parameter mismatch",
	// "in progress: ...", "failed before commit", "throttled",
	// "abandoned before commit: ...", "rejected: ...", "found sr_000001",
	// "not found", "found 2: sr_000001, sr_000004", "found none", with
	// ", response lost" appended when the answer was withheld. For Find,
	// Key holds the reference.
	Outcome string
}

// String renders the event as one timeline line.
func (e Event) String() string {
	if e.Op == "" {
		return fmt.Sprintf("t=%v provider: %s", e.At, e.Outcome)
	}
	fault := ""
	if e.Fault != FaultNone {
		fault = " [" + e.Fault.String() + "]"
	}
	return fmt.Sprintf("t=%v account %s key %s %s%s -> %s", e.At, e.Account, e.Key, e.Op, fault, e.Outcome)
}

// Log returns a copy of every event so far, in order.
func (p *Provider) Log() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// Timeline renders the log, one event per line, for a test's failure
// message.
func (p *Provider) Timeline() string {
	events := p.Log()
	lines := make([]string, len(events))
	for i, e := range events {
		lines[i] = e.String()
	}
	return strings.Join(lines, "\n")
}

// OnEvent sets a hook called with every event as it is logged, outside the
// provider's lock (so it may call the provider), for example to copy the
// provider's view into a suite's own history. nil removes the hook.
func (p *Provider) OnEvent(hook func(Event)) {
	p.mu.Lock()
	p.onEvent = hook
	p.mu.Unlock()
}

// logLocked appends an event stamped now and returns it; the caller passes
// it to unlockNotify.
func (p *Provider) logLocked(op Op, account, key string, fault FaultKind, outcome string) Event {
	e := Event{At: time.Since(p.start), Op: op, Account: account, Key: key, Fault: fault, Outcome: outcome}
	p.events = append(p.events, e)
	return e
}

// unlockNotify releases p.mu and then hands events to the OnEvent hook.
func (p *Provider) unlockNotify(events ...Event) {
	hook := p.onEvent
	p.mu.Unlock()
	if hook != nil {
		for _, e := range events {
			hook(e)
		}
	}
}

// emit logs one event from outside the lock.
func (p *Provider) emit(op Op, account, key string, fault FaultKind, outcome string) {
	p.mu.Lock()
	p.unlockNotify(p.logLocked(op, account, key, fault, outcome))
}
