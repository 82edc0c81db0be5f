// Package rubric holds the types that describe a lab's suite as the grader
// and the feedback see it: the lab, the concepts it teaches and the cases
// that check them, with their points and explanations. It has no test
// machinery, so the grader and labctl depend on it without depending on any
// suite.
package rubric

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TimelineStart and TimelineEnd frame a case's timeline in test output; the
// grader looks for them to lift the timeline out of the log.
const (
	TimelineStart = "--- timeline (virtual time) ---"
	TimelineEnd   = "--- end timeline ---"
)

// InconclusiveMark starts the message of a case that skips itself because
// it could not exercise its property on this run; the grader reports such a
// case as "not exercised", with no points.
const InconclusiveMark = "inconclusive:"

// SeedEnv is the environment variable that overrides every case's seed;
// labctl check --seed sets it.
const SeedEnv = "LABKIT_SEED"

// ProgEnv is the environment variable through which labctl check tells
// the suite how the learner runs labctl from where they stand ("go run
// ./cmd/labctl", "../../bin/labctl"), so that a failing case's replay
// command works as printed.
const ProgEnv = "LABKIT_PROG"

// The names of a lab's model cases (suites/modelcheck): generated
// sequences compared with a model, and concurrent histories checked for
// linearizability.
const (
	ModelSequences    = "random_call_sequences_follow_the_rules"
	ModelLinearizable = "concurrent_calls_are_linearizable"
)

// ModelBudgetFactor is how many times the grader's per-case budget of real
// time a model case gets: it runs a hundred sequences, and on a failure
// shortens one for up to 6 s, so on a machine busy with other work it
// needs more real time than a hand-written case for the same verdict.
const ModelBudgetFactor = 3

// Budget is the real time the grader lets case name run, given its
// budget for one case.
func Budget(name string, perCase time.Duration) time.Duration {
	if name == ModelSequences || name == ModelLinearizable {
		return ModelBudgetFactor * perCase
	}
	return perCase
}

// Lab describes one lab's suite: its cases and the concepts they check.
type Lab struct {
	Number   int       // 1 for labs/01-claim
	Slug     string    // "claim"
	Title    string    // "Claim before you execute"
	TestName string    // top-level test function, "TestClaim"
	Concepts []Concept // every concept a case may name
	Cases    []Case    // in the order they run
}

// Concept is one idea a lab teaches. Feedback for a failing case shows the
// concept's misconception, hint and docs section.
type Concept struct {
	ID            string // stable identifier, "atomic-claim"
	Title         string // "The claim is one atomic step"
	Misconception string // the belief that produces the bug, in the student's words
	Hint          string // what to try next, without giving the code away
	Docs          string // docs section to read, "docs/01-claim.md#the-claim-is-one-atomic-step"
}

// Case is one behaviour the suite checks. Name is the subtest name.
type Case struct {
	Name        string   // "concurrent_duplicates_execute_once"
	Concept     string   // Concept.ID
	Rules       []string // the lab README's numbered rules the case checks, "R1"
	Points      int
	Explanation string // the property and why it matters
	// Race is set for a case that only the race detector can judge (a
	// data race that need not change any result). Without the detector
	// such a case is reported "not exercised" and earns nothing, never a
	// pass.
	Race bool
}

// Concept returns the concept with the given ID, or a zero Concept.
func (l Lab) Concept(id string) Concept {
	for _, c := range l.Concepts {
		if c.ID == id {
			return c
		}
	}
	return Concept{}
}

// TotalPoints is the sum of every case's points.
func (l Lab) TotalPoints() int {
	n := 0
	for _, c := range l.Cases {
		n += c.Points
	}
	return n
}

// Validate reports rubric mistakes: duplicate names, unknown concepts,
// missing explanations or points. Each suite's own test calls it.
func (l Lab) Validate() error {
	var problems []string
	seen := map[string]bool{}
	concepts := map[string]bool{}
	for _, c := range l.Concepts {
		if c.ID == "" || c.Title == "" || c.Misconception == "" || c.Hint == "" || c.Docs == "" {
			problems = append(problems, fmt.Sprintf("concept %q: every field is required", c.ID))
		}
		concepts[c.ID] = true
	}
	for _, c := range l.Cases {
		switch {
		case seen[c.Name]:
			problems = append(problems, fmt.Sprintf("case %q: duplicate name", c.Name))
		case strings.ContainsAny(c.Name, " /"):
			problems = append(problems, fmt.Sprintf("case %q: name must not contain spaces or slashes", c.Name))
		case !concepts[c.Concept]:
			problems = append(problems, fmt.Sprintf("case %q: unknown concept %q", c.Name, c.Concept))
		case c.Points <= 0:
			problems = append(problems, fmt.Sprintf("case %q: points must be positive", c.Name))
		case c.Explanation == "":
			problems = append(problems, fmt.Sprintf("case %q: no explanation", c.Name))
		}
		for _, r := range c.Rules {
			if !ruleID.MatchString(r) {
				problems = append(problems, fmt.Sprintf("case %q: rule %q is not of the form R1, R2, ...", c.Name, r))
			}
		}
		seen[c.Name] = true
	}
	if l.TestName == "" || !strings.HasPrefix(l.TestName, "Test") {
		problems = append(problems, fmt.Sprintf("test name %q must start with Test", l.TestName))
	}
	if len(problems) > 0 {
		return fmt.Errorf("lab %d %s: %s", l.Number, l.Slug, strings.Join(problems, "; "))
	}
	return nil
}

// Rule is one numbered rule of a lab's README: a promise the suite checks.
type Rule struct {
	ID   string // "R3"
	Text string // the rule, as written
}

var (
	ruleID   = regexp.MustCompile(`^R[1-9][0-9]*$`)
	ruleItem = regexp.MustCompile(`(?m)^\s*[-*]\s+\*\*(R[0-9]+)\.\*\*\s+(.+)$`)
)

// ErrRules is wrapped by ParseRules' errors.
var ErrRules = errors.New("numbered rules")

// ParseRules returns the numbered rules of a lab README: list items that
// start with the rule's number in bold, "- **R1.** A duplicate ...". The
// rules must be numbered R1, R2, ... in order, with none missing.
func ParseRules(readme string) ([]Rule, error) {
	var rules []Rule
	for _, m := range ruleItem.FindAllStringSubmatch(readme, -1) {
		want := "R" + strconv.Itoa(len(rules)+1)
		if m[1] != want {
			return rules, fmt.Errorf("%w: found %s where %s comes next (number the rules R1, R2, ... in order)", ErrRules, m[1], want)
		}
		rules = append(rules, Rule{ID: m[1], Text: strings.TrimSpace(m[2])})
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%w: none found (write them as list items \"- **R1.** ...\")", ErrRules)
	}
	return rules, nil
}
