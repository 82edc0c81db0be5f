package diagnosis

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var table = []Signature{
	{Mistake: "global-lock", Concept: "per-key-isolation", Summary: "one mutex held\n  for the whole call", Failing: map[string]string{"pending": Fail, "keys-independent": Fail}},
	{Mistake: "check-then-insert", Concept: "atomic-claim", Summary: "lookup and insert are two steps", Failing: map[string]string{"simultaneous": Fail, "linearizable": Fail}},
	{Mistake: "unlocked-read", Concept: "atomic-claim", Summary: "a read outside the lock", Failing: map[string]string{"simultaneous": Race}},
	{Mistake: "never-released", Concept: "release", Summary: "a failure keeps the key", Failing: map[string]string{"releases": Fail, "sequences": Fail}},
	{Mistake: "released-late", Concept: "release", Summary: "the key is released after a delay", Failing: map[string]string{"releases": Fail, "sequences": Fail}},
	{Mistake: "value-dropped", Concept: "results", Summary: "the value is dropped", Failing: map[string]string{"values": Fail, "sequences": Fail}},
	{Mistake: "error-dropped", Concept: "errors", Summary: "the error is dropped", Failing: map[string]string{"values": Fail, "sequences": Fail}},
}

var order = []string{"pending", "keys-independent", "simultaneous", "linearizable", "releases", "values", "sequences", "other"}

func TestDiagnose(t *testing.T) {
	for _, tt := range []struct {
		name    string
		failing map[string]string
		want    string // the mistake named, "" for none
		shown   bool
		also    []string
	}{
		{"exact set", map[string]string{"pending": Fail, "keys-independent": Fail}, "global-lock", true, nil},
		{"the kind breaks a tie", map[string]string{"simultaneous": Race}, "unlocked-read", true, nil},
		{"a superset half as large", map[string]string{"pending": Fail, "keys-independent": Fail, "other": Fail, "linearizable": Fail}, "global-lock", true, nil},
		{"below the threshold", map[string]string{"pending": Fail, "other": Fail, "releases": Fail}, "", false, nil},
		{"nothing shared", map[string]string{"other": Fail}, "", false, nil},
		{"no failures", map[string]string{}, "", false, nil},
		{"indistinguishable mistakes are listed", map[string]string{"releases": Fail, "sequences": Fail}, "never-released", true, []string{"released-late"}},
		{"indistinguishable concepts are not named", map[string]string{"sequences": Fail, "values": Fail}, "", false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, shown := Diagnose(table, order, tt.failing)
			got := ""
			if shown {
				got = m.Mistake
			}
			if got != tt.want || shown != tt.shown {
				t.Fatalf("Diagnose(%v) = %q, %v, want %q, %v", tt.failing, m.Mistake, shown, tt.want, tt.shown)
			}
			if diff := cmp.Diff(tt.also, m.Also); shown && diff != "" {
				t.Errorf("Diagnose(%v).Also (-want +got):\n%s", tt.failing, diff)
			}
		})
	}
}

func TestDiagnoseEvidence(t *testing.T) {
	m, ok := Diagnose(table, order, map[string]string{"other": Fail, "pending": Fail, "keys-independent": Fail})
	want := Match{Signature: table[0], Similarity: 2.0 / 3, Shared: []string{"pending", "keys-independent"}, Extra: []string{"other"}}
	if diff := cmp.Diff(want, m, cmpopts.EquateApprox(0, 1e-9)); !ok || diff != "" {
		t.Errorf("Diagnose = shown %v, (-want +got):\n%s", ok, diff)
	}
	if m.Exact() {
		t.Errorf("Exact() = true with an extra failing case")
	}
}

func TestCounts(t *testing.T) {
	for status, want := range map[string]bool{"fail": true, "data race": true, "panic": true, "timeout": false, "crashed": false, "did not finish": false, "not run": false, "not exercised": false, "pass": false} {
		if got := Counts(status); got != want {
			t.Errorf("Counts(%q) = %v, want %v", status, got, want)
		}
	}
}

func TestSentence(t *testing.T) {
	if got, want := table[0].Sentence(), "one mutex held for the whole call"; got != want {
		t.Errorf("Sentence() = %q, want %q", got, want)
	}
}

func TestDiagnoseWeighsModelCasesLess(t *testing.T) {
	table := []Signature{
		{Mistake: "only-the-model-sees-it", Summary: "a", Failing: map[string]string{"random_call_sequences_follow_the_rules": Fail}},
		{Mistake: "stale-read", Summary: "b", Failing: map[string]string{"reads": Fail, "random_call_sequences_follow_the_rules": Fail}},
	}
	order := []string{"reads", "writes", "random_call_sequences_follow_the_rules"}
	if m, ok := Diagnose(table, order, map[string]string{"writes": Fail, "random_call_sequences_follow_the_rules": Fail}); ok {
		t.Errorf("a run failing writes and the model case is diagnosed as %s (%.2f); a mistake only the model case sees says nothing about writes", m.Mistake, m.Similarity)
	}
	if m, ok := Diagnose(table, order, map[string]string{"random_call_sequences_follow_the_rules": Fail}); !ok || m.Mistake != "only-the-model-sees-it" {
		t.Errorf("a run failing the model case alone = %q, %v, want only-the-model-sees-it", m.Mistake, ok)
	}
	if m, ok := Diagnose(table, order, map[string]string{"reads": Fail, "random_call_sequences_follow_the_rules": Fail}); !ok || m.Mistake != "stale-read" {
		t.Errorf("a run failing reads and the model case = %q, %v, want stale-read", m.Mistake, ok)
	}
	if got := Weight("concurrent_calls_are_linearizable_on_redis"); got != ModelWeight {
		t.Errorf("Weight(a per-backend model case) = %v, want %v", got, ModelWeight)
	}
}

func TestDiagnoseWeighsCommonCasesLess(t *testing.T) {
	// "waits" fails for many mistakes, "arithmetic" and "admission" for one
	// each: a run failing "waits" beside "arithmetic" is the arithmetic
	// mistake, though it shares as many cases with each waiting one.
	table := []Signature{
		{Mistake: "wait-ignores-deadline", Concept: "deadline", Summary: "a", Failing: map[string]string{"waits": Fail, "model": Fail}},
		{Mistake: "wait-restarted", Concept: "deadline", Summary: "b", Failing: map[string]string{"waits": Fail, "model": Fail}},
		{Mistake: "tenant-ignored", Concept: "tenants", Summary: "c", Failing: map[string]string{"waits": Fail, "tenants": Fail, "model": Fail}},
		{Mistake: "rounded", Concept: "arithmetic", Summary: "d", Failing: map[string]string{"arithmetic": Fail, "model": Fail}},
		{Mistake: "claim-first", Concept: "admission", Summary: "e", Failing: map[string]string{"admission": Fail, "model": Fail}},
	}
	order := []string{"waits", "tenants", "arithmetic", "admission", "model"}
	m, ok := Diagnose(table, order, map[string]string{"arithmetic": Fail, "waits": Fail, "model": Fail})
	if !ok || m.Mistake != "rounded" {
		t.Errorf("a run failing waits, arithmetic and the model = %q, %v, want rounded", m.Mistake, ok)
	}
	if r := Rarity(table); !(r["waits"] < r["arithmetic"]) || !(r["model"] < r["waits"]) {
		t.Errorf("Rarity = %v, want model < waits < arithmetic", r)
	}
}

func TestHeldOut(t *testing.T) {
	table := []Signature{
		{Mistake: "a", From: []string{"04-retry/wrong/t3-a"}},
		{Mistake: "b"},
		{Mistake: "c", From: []string{"04-retry/wrong/t3-x", "04-retry/wrong/t3-a"}},
	}
	names := func(s []Signature) (out []string) {
		for _, x := range s {
			out = append(out, x.Mistake)
		}
		return out
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"04-retry/wrong/t3-a", []string{"b"}},
		{"/kit/suites/testdata/blind/04-retry/wrong/t3-a", []string{"b"}},
		{"04-retry/wrong/t3-x", []string{"a", "b"}},
		{"04-retry/wrong/xt3-a", []string{"a", "b", "c"}}, // a suffix of a name is not the name
		{"04-retry/correct/t3-a", []string{"a", "b", "c"}},
	} {
		if got := names(HeldOut(table, tc.path)); !slices.Equal(got, tc.want) {
			t.Errorf("HeldOut(table, %q) = %v, want %v", tc.path, got, tc.want)
		}
	}
	if got := HeldOut(table, "04-retry/wrong/t3-a"); len(table) != 3 || len(got) != 1 {
		t.Errorf("HeldOut changed its table: %d entries left, want 3", len(table))
	}
}

// TestDiagnoseTieAcrossRulesNamesNone: mistakes of one concept that break
// different rules and fail the same cases are different bugs the run
// cannot tell apart; one concept and one rule is a tie Diagnose names.
func TestDiagnoseTieAcrossRulesNamesNone(t *testing.T) {
	failing := map[string]string{"swallowed": Fail, "sequences": Fail}
	table := []Signature{
		{Mistake: "load-error-is-absent", Concept: "failing-dependencies", Rules: []string{"R4"}, Summary: "a", Failing: failing},
		{Mistake: "save-error-ignored", Concept: "failing-dependencies", Rules: []string{"R3"}, Summary: "b", Failing: failing},
	}
	if m, ok := Diagnose(table, []string{"swallowed", "sequences"}, failing); ok {
		t.Errorf("Diagnose(a tie across R3 and R4) = %q, true; want no diagnosis", m.Mistake)
	}
	table[1].Rules = []string{"R4"}
	if m, ok := Diagnose(table, []string{"swallowed", "sequences"}, failing); !ok || m.Mistake != "load-error-is-absent" || !slices.Equal(m.Also, []string{"save-error-ignored"}) {
		t.Errorf("Diagnose(a tie within R4) = %q, %v, also %v; want load-error-is-absent, true, also [save-error-ignored]", m.Mistake, ok, m.Also)
	}
}
