package diagram

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// CodeLane is the label of the lane FromTimeline draws for the code under
// test.
const CodeLane = "your code"

// testActor is the party that the suites' timelines name for the test's
// own steps (a clock moved, a context cancelled, a note).
const testActor = "test"

// partyRE matches a test step that names the party it was made for.
var partyRE = regexp.MustCompile(`^\s*((?:worker|caller|client|holder|process) [^ ]+) (.+)$`)

// maxTimelineText is the most runes of one timeline text a diagram shows;
// the text timeline beside it has the rest.
const maxTimelineText = 90

// FromTimeline draws a failing case's timeline, as the suites print it
// ("t=0s       caller 1   Do(\"k\") -> returned \"v\""), as a sequence
// diagram. Each party the timeline names gets a lane, in order of first
// appearance, and the code under test a lane of its own on the right
// (CodeLane). A party's step is a message to that lane and its outcome a
// reply; an outcome that says the call is still waiting is a reply lost on
// the way. The test's own steps, and the "... N more events ..." line of a
// long timeline, are notes across every lane. name makes the figure's ids
// unique on a page and title is its accessible name. Lines that are not
// timeline steps are skipped; a timeline with no step is ErrInvalid.
func FromTimeline(name, title string, lines []string) (*Sequence, error) {
	s := &Sequence{Common: Common{Name: name, Title: title}}
	lane := map[string]string{} // actor -> lane id
	type event struct{ at, actor, action, outcome string }
	var events []event
	for _, line := range lines {
		rest, ok := strings.CutPrefix(line, "t=")
		if !ok {
			if t := strings.TrimSpace(line); strings.HasPrefix(t, "... ") {
				events = append(events, event{actor: testActor, action: strings.Trim(t, ". ")})
			}
			continue
		}
		at, rest, _ := strings.Cut(rest, " ")
		rest = strings.TrimLeft(rest, " ")
		actor, action, ok := strings.Cut(rest, "  ")
		if !ok {
			actor, action = testActor, rest
		}
		action = strings.TrimLeft(action, " ")
		action, outcome, _ := strings.Cut(action, " -> ")
		if m := partyRE.FindStringSubmatch(action); actor == testActor && m != nil {
			// A step the test made for a party ("worker 7 Lock" in a
			// schedule the suite chose): the party's own lane, and what the
			// schedule did next beside it.
			actor, action = m[1], m[2]
			if outcome != "" {
				action += " (next: " + outcome + ")"
				outcome = ""
			}
		}
		events = append(events, event{at: at, actor: actor, action: action, outcome: outcome})
		if actor != testActor && lane[actor] == "" {
			lane[actor] = fmt.Sprintf("p%d", len(s.Lanes)+1)
			s.Lanes = append(s.Lanes, Lane{ID: lane[actor], Label: short(actor, 24)})
		}
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("%w: timeline %q has no step", ErrInvalid, name)
	}
	s.Lanes = append(s.Lanes, Lane{ID: "code", Label: CodeLane})
	first, last := s.Lanes[0].ID, "code"
	shown := ""
	for _, e := range events {
		at := ""
		if e.at != "" && e.at != shown {
			at, shown = e.at, e.at
		}
		if e.actor == testActor {
			text := e.action
			if e.outcome != "" {
				text += " → " + e.outcome
			}
			to := last
			if first == last {
				to = ""
			}
			s.Steps = append(s.Steps, Step{Kind: Note, From: first, To: to, Text: short(text, maxTimelineText), Time: at})
			continue
		}
		s.Steps = append(s.Steps, Step{Kind: Message, From: lane[e.actor], To: "code", Text: short(e.action, maxTimelineText), Time: at})
		if e.outcome == "" {
			continue
		}
		kind := Reply
		if strings.Contains(e.outcome, "still waiting") || strings.Contains(e.outcome, "did not return") {
			kind = Lost
		}
		s.Steps = append(s.Steps, Step{Kind: kind, From: "code", To: lane[e.actor], Text: short(e.outcome, maxTimelineText)})
	}
	return s, s.validate()
}

// short is s cut to n runes, with "…" when it was longer.
func short(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
