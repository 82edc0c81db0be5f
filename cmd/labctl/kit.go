package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fourth-outcome/labkit/changelog"
	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
)

// modulePath is the kit's module; a directory whose go.mod declares it is a
// kit checkout.
const modulePath = "github.com/fourth-outcome/labkit"

func getwd() (string, error) { return os.Getwd() }

// kitRoot finds the kit checkout containing the working directory.
func (e *env) kitRoot() (string, error) {
	if e.root != "" {
		return e.root, nil
	}
	dir, err := e.getwd()
	if err != nil {
		return "", usagef("cannot read the working directory: %v", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module "+modulePath+"\n")) {
			e.root = d
			return d, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", usagef("no kit checkout here: %s is not inside a clone of the lab kit (no go.mod declaring %s); cd into your clone", dir, modulePath)
}

// resolveLab finds a lab by number or name, as a usage error if unknown.
func resolveLab(name string) (grader.Lab, error) {
	l, err := course.Find(name)
	if err != nil {
		return grader.Lab{}, usagef("%v", err)
	}
	return l.Lab, nil
}

// raceMode turns the --race flag ("auto", "on", "off") into a decision,
// saying once on stderr when the detector is unavailable.
func (e *env) raceMode(flagValue string) (bool, error) {
	switch flagValue {
	case "off", "false", "0":
		return false, nil
	case "on", "true", "1", "auto", "":
		ok, why := grader.RaceSupport()
		if ok {
			return true, nil
		}
		if flagValue == "on" || flagValue == "true" || flagValue == "1" {
			return false, usagef("--race=on: the race detector is unavailable: %s", why)
		}
		e.raceNoteOnce.Do(func() {
			fmt.Fprintf(e.stderr, "note: running without the race detector, because %s (it needs cgo and a C compiler, e.g. apt-get install gcc). Checks still run; data races will not be reported.\n", why)
		})
		return false, nil
	default:
		return false, usagef("--race=%q: want auto, on or off", flagValue)
	}
}

// warnNotSaved says on stderr what labctl could not remember in .labkit/
// and what that means for the learner. The command's own work is done (its
// output says what it did) and its exit status stands.
func (e *env) warnNotSaved(what string, err error, means string) {
	fmt.Fprintf(e.stderr, "labctl: warning: could not record %s (%v): %s. Is .labkit/ writable?\n", what, err, means)
}

// state is what labctl remembers between runs, in .labkit/state.json.
type state struct {
	Labs map[string]labState `json:"labs"`
}

type labState struct {
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
	LastPass *passRecord `json:"last_pass,omitempty"`
}

// passRecord is one passing check: when, with what score, under which
// rules level (0: before labctl recorded levels).
type passRecord struct {
	Score     int       `json:"score"`
	Total     int       `json:"total"`
	Rules     int       `json:"rules"`
	CheckedAt time.Time `json:"checked_at"`
}

// recordCheck is the lab's state after a check that scored score of total
// under rules level rules at now, given its state before: a pass becomes
// the pass on record, a failure keeps the earlier one (from before labctl
// kept LastPass, an earlier passing check counts).
func recordCheck(prev labState, score, total int, passed bool, rules int, now time.Time) labState {
	next := labState{Score: score, Total: total, Passed: passed, CheckedAt: now, HintLevel: prev.HintLevel, Rules: rules, LastPass: prev.LastPass}
	switch {
	case passed:
		next.LastPass = &passRecord{Score: score, Total: total, Rules: rules, CheckedAt: now}
	case next.LastPass == nil && prev.Passed:
		next.LastPass = &passRecord{Score: prev.Score, Total: prev.Total, Rules: prev.Rules, CheckedAt: prev.CheckedAt}
	}
	return next
}

// passedUnderEarlierRules is the pass on record of a lab that fails now
// when a rule of that lab changed since it, and the changes; nil when the
// lab passes, never passed, or failed under the rules it passed under.
func passedUnderEarlierRules(s labState, lab int) (*passRecord, []changelog.Entry) {
	if s.Passed || s.LastPass == nil || s.LastPass.Rules >= s.Rules {
		return nil, nil
	}
	changes := changelog.Between(s.LastPass.Rules, s.Rules, lab)
	if len(changes) == 0 {
		return nil, nil
	}
	return s.LastPass, changes
}

func statePath(root string) string { return filepath.Join(root, ".labkit", "state.json") }

func loadState(root string) (*state, error) {
	st := &state{Labs: map[string]labState{}}
	data, err := os.ReadFile(statePath(root))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	if err := json.Unmarshal(data, st); err != nil {
		// A damaged state file only loses the history (scores shown by
		// list, hint levels); start over rather than refuse to work.
		return &state{Labs: map[string]labState{}}, nil
	}
	if st.Labs == nil {
		st.Labs = map[string]labState{}
	}
	return st, nil
}

func saveState(root string, st *state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(statePath(root)), 0o755); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	tmp := statePath(root) + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if err := os.Rename(tmp, statePath(root)); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}
