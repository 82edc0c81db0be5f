package suites

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/rubric"
)

// TimelineStart and TimelineEnd frame a timeline in test output (see
// package rubric).
const (
	TimelineStart = rubric.TimelineStart
	TimelineEnd   = rubric.TimelineEnd
)

// Event is one line of a case's history: at virtual time At, Actor did
// Action, and Outcome happened.
type Event struct {
	At      time.Duration
	Actor   string
	Action  string
	Outcome string
}

// History records what happened during one case, so that a failure can be
// shown as the interleaving that caused it ("t=0s worker B Do(k1) -> executed
// the work again"). It is safe for concurrent use. Times are measured from
// the History's creation on whatever clock the case runs on: inside a
// fakeclock bubble, virtual time.
type History struct {
	mu     sync.Mutex
	start  time.Time
	events []Event
}

// NewHistory returns an empty History whose t=0s is now. Run gives every
// case one; a suite makes its own for a run it does not show (a scenario
// played quietly to see whether it fails).
func NewHistory() *History { return &History{start: time.Now()} }

// Restart resets the history's zero to now, keeping the events so far. Run
// restarts every case's history as the case's bubble starts, so that t=0s
// is the bubble's start; a case made of several parts can restart it for
// each part.
func (h *History) Restart() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.start = time.Now()
}

// Record adds an event at the current time.
func (h *History) Record(actor, action, outcome string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, Event{At: time.Since(h.start), Actor: actor, Action: action, Outcome: outcome})
}

// Recordf adds an event whose outcome is formatted.
func (h *History) Recordf(actor, action, format string, args ...any) {
	h.Record(actor, action, fmt.Sprintf(format, args...))
}

// Note adds an event with no actor, for the test's own narration
// ("advance the clock 30s").
func (h *History) Note(format string, args ...any) {
	h.Record("test", fmt.Sprintf(format, args...), "")
}

// Append adds events as they are, with the times they carry: a model case
// (package suites/modelcheck) copies in the events of the sequence it
// replayed, each timed on that sequence's own clock.
func (h *History) Append(events ...Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, events...)
}

// Events returns a copy of the events so far.
func (h *History) Events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.events...)
}

// Timeline renders the history as an aligned block framed by TimelineStart
// and TimelineEnd, or "" when nothing was recorded: the text a failing case
// prints when no grader reads its record.
func (h *History) Timeline() string {
	lines := h.Lines()
	if len(lines) == 0 {
		return ""
	}
	return TimelineStart + "\n" + strings.Join(lines, "\n") + "\n" + TimelineEnd
}

// Lines renders the history as aligned lines, one per event ("t=0s
// worker A  Do(k1) -> ..."), the first and last 20 of a longer history with
// a line saying how many are left out between them: a failing case's
// timeline in its record.
func (h *History) Lines() []string {
	events := h.Events()
	if len(events) == 0 {
		return nil
	}
	const maxEvents = 40
	actorWidth := 0
	for _, e := range events {
		actorWidth = max(actorWidth, len(e.Actor))
	}
	shown := events
	if len(events) > maxEvents {
		shown = append(append([]Event(nil), events[:maxEvents/2]...), events[len(events)-maxEvents/2:]...)
	}
	var out []string
	for i, e := range shown {
		if len(events) > maxEvents && i == maxEvents/2 {
			out = append(out, fmt.Sprintf("... %d more events ...", len(events)-maxEvents))
		}
		line := fmt.Sprintf("t=%-8s %-*s  %s", formatAt(e.At), actorWidth, e.Actor, e.Action)
		if e.Outcome != "" {
			line += " -> " + e.Outcome
		}
		out = append(out, strings.TrimRight(line, " "))
	}
	return out
}

func formatAt(d time.Duration) string {
	if d < time.Millisecond {
		return d.Truncate(time.Microsecond).String()
	}
	return d.Truncate(time.Millisecond).String()
}
