package rubric

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseRules(t *testing.T) {
	readme := "# Lab\n\nIntro with **R9.** in prose, not a list item.\n\n## Rules\n\n- **R1.** A duplicate of a pending key is told `ErrInProgress`.\n- **R2.** The work runs once\n  per key.\n* **R3.** Results come back unchanged.\n"
	got, err := ParseRules(readme)
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{ID: "R1", Text: "A duplicate of a pending key is told `ErrInProgress`."},
		{ID: "R2", Text: "The work runs once"},
		{ID: "R3", Text: "Results come back unchanged."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseRules mismatch (-want +got):\n%s", diff)
	}
	for name, text := range map[string]string{
		"none":      "# Lab\n\nNo rules here.\n",
		"gap":       "- **R1.** a\n- **R3.** c\n",
		"duplicate": "- **R1.** a\n- **R1.** b\n",
		"from R2":   "- **R2.** b\n",
	} {
		if _, err := ParseRules(text); !errors.Is(err, ErrRules) {
			t.Errorf("ParseRules(%s) error = %v, want ErrRules", name, err)
		}
	}
}

func TestValidateRejectsMalformedRuleNames(t *testing.T) {
	l := Lab{Number: 1, Slug: "x", TestName: "TestX",
		Concepts: []Concept{{ID: "c", Title: "t", Misconception: "m", Hint: "h", Docs: "d"}},
		Cases:    []Case{{Name: "a", Concept: "c", Points: 1, Explanation: "e", Rules: []string{"rule 1"}}}}
	if err := l.Validate(); err == nil {
		t.Error("Validate accepted a case naming rule \"rule 1\"")
	}
	l.Cases[0].Rules = []string{"R1"}
	if err := l.Validate(); err != nil {
		t.Errorf("Validate(case with rule R1) = %v, want nil", err)
	}
}

func TestBudget(t *testing.T) {
	for name, want := range map[string]time.Duration{
		ModelSequences:               30 * time.Second,
		ModelLinearizable:            30 * time.Second,
		"results_returned_unchanged": 10 * time.Second,
	} {
		if got := Budget(name, 10*time.Second); got != want {
			t.Errorf("Budget(%q, 10s) = %v, want %v", name, got, want)
		}
	}
}
