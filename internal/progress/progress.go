// Package progress is what labctl remembers of a learner's progress
// between runs, in .labkit/state.json: each lab's last check, the pass on
// record, and the hints seen.
package progress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fourth-outcome/labkit/changelog"
	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
)

// State is what labctl remembers between runs, in .labkit/state.json:
// each lab's last check, by the lab's folder name.
type State struct {
	Labs map[string]LabState `json:"labs"`
}

// LabState is what labctl remembers of one lab.
type LabState struct {
	Score     int       `json:"score"`
	Total     int       `json:"total"`
	Passed    bool      `json:"passed"`
	CheckedAt time.Time `json:"checked_at"`
	HintLevel int       `json:"hint_level,omitempty"`
	// Rules is the changelog level the last check graded with; 0 for a
	// check made before labctl recorded it.
	Rules int `json:"rules,omitempty"`
	// LastPass is the latest check that passed, kept when a later check
	// fails: a learner who passed under earlier rules keeps that pass on
	// record, and list and check say which rules changed since.
	LastPass *Pass `json:"last_pass,omitempty"`
}

// Pass is one passing check: when, with what score, under which
// rules level (0: before labctl recorded levels).
type Pass struct {
	Score     int       `json:"score"`
	Total     int       `json:"total"`
	Rules     int       `json:"rules"`
	CheckedAt time.Time `json:"checked_at"`
}

// AfterCheck is the lab's state after a check that scored score of total
// under rules level rules at now, given its state before: a pass becomes
// the pass on record, a failure keeps the earlier one (from before labctl
// kept LastPass, an earlier passing check counts).
func AfterCheck(prev LabState, score, total int, passed bool, rules int, now time.Time) LabState {
	next := LabState{Score: score, Total: total, Passed: passed, CheckedAt: now, HintLevel: prev.HintLevel, Rules: rules, LastPass: prev.LastPass}
	switch {
	case passed:
		next.LastPass = &Pass{Score: score, Total: total, Rules: rules, CheckedAt: now}
	case next.LastPass == nil && prev.Passed:
		next.LastPass = &Pass{Score: prev.Score, Total: prev.Total, Rules: prev.Rules, CheckedAt: prev.CheckedAt}
	}
	return next
}

// PassedUnderEarlierRules is the pass on record of a lab that fails now
// when a rule of that lab changed since it, and the changes; nil when the
// lab passes, never passed, or failed under the rules it passed under.
func PassedUnderEarlierRules(s LabState, lab int) (*Pass, []changelog.Entry) {
	if s.Passed || s.LastPass == nil || s.LastPass.Rules >= s.Rules {
		return nil, nil
	}
	changes := changelog.Between(s.LastPass.Rules, s.Rules, lab)
	if len(changes) == 0 {
		return nil, nil
	}
	return s.LastPass, changes
}

// Path is the file of the state of the kit at root.
func Path(root string) string { return filepath.Join(root, ".labkit", "state.json") }

// Load reads the state of the kit at root: an empty one when there is
// none yet, or when the file is damaged.
func Load(root string) (*State, error) {
	st := &State{Labs: map[string]LabState{}}
	data, err := os.ReadFile(Path(root))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	if err := json.Unmarshal(data, st); err != nil {
		// A damaged state file only loses the history (scores shown by
		// list, hint levels); start over rather than refuse to work.
		return &State{Labs: map[string]LabState{}}, nil
	}
	if st.Labs == nil {
		st.Labs = map[string]LabState{}
	}
	return st, nil
}

// Save writes st as the state of the kit at root, atomically.
func Save(root string, st *State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(Path(root)), 0o755); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	tmp := Path(root) + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if err := os.Rename(tmp, Path(root)); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}

// FirstUnpassed is the first built lab whose last recorded check did not
// pass; done is true when every built lab has passed (lab is then the
// last one).
func (st *State) FirstUnpassed() (lab grader.Lab, done bool) {
	built := course.Built()
	for _, l := range built {
		if !st.Labs[l.Dir].Passed {
			return l.Lab, false
		}
	}
	return built[len(built)-1].Lab, true
}

// WarnNotSaved says on w what labctl could not remember in .labkit/ and
// what that means for the learner. The command's own work is done (its
// output says what it did) and its exit status stands.
func WarnNotSaved(w io.Writer, what string, err error, means string) {
	fmt.Fprintf(w, "labctl: warning: could not record %s (%v): %s. Is .labkit/ writable?\n", what, err, means)
}
