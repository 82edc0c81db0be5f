// Package diagnosis names the bug behind a failing run by its signature:
// which cases fail, and how. The kit knows, for each catalogued mistake of
// a lab, the cases it fails (labctl verify computes them and writes them
// to course/signatures); a learner's run whose failures look like a
// mistake's is shown that mistake's misconception, with the evidence,
// instead of only the first failing case's concept, which a different bug
// failing the same case would share.
//
// Only failures that say something about the code count: a case that
// failed, found a data race or panicked. A timeout, a crash, a case that
// did not finish or never ran says where the code stopped, not what it
// believes, so such cases are left out of a signature and a run whose only
// failures are of that kind gets no diagnosis.
package diagnosis

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fourth-outcome/labkit/rubric"
)

// Threshold is the least similarity (a weighted Jaccard similarity of the
// two sets of failing cases, see Weight and Rarity) at which a catalogued
// mistake is named. Below it the feedback shows each failing case's
// concept, as it would without a table. At 0.5, half of the weight of the
// cases in the two sets together fails in both.
const Threshold = 0.5

// ModelWeight is the weight of a model case in a signature. The model
// cases (generated sequences, concurrent histories) fail for almost every
// bug, so they say little about which one it is: a mistake that only a
// model case catches must not be named for every run that fails a model
// case and something else.
const ModelWeight = 0.25

// Weight is how much case name counts in a similarity: ModelWeight for a
// model case (rubric.ModelSequences or rubric.ModelLinearizable, or one of
// their per-backend variants, "<case>_on_memory"), 1 for any other.
func Weight(name string) float64 {
	if strings.HasPrefix(name, rubric.ModelSequences) || strings.HasPrefix(name, rubric.ModelLinearizable) {
		return ModelWeight
	}
	return 1
}

// Kinds of failure that enter a signature, as grader.Status spells them.
const (
	Fail  = "fail"
	Race  = "data race"
	Panic = "panic"
)

// Counts reports whether a case status enters a signature.
func Counts(status string) bool {
	return status == Fail || status == Race || status == Panic
}

// Signature is one catalogued mistake and what it fails.
type Signature struct {
	Mistake string   `json:"mistake"` // the catalogue entry's name, "check-then-insert"
	Concept string   `json:"concept"` // its concept
	Rules   []string `json:"rules,omitempty"`
	Summary string   `json:"summary"` // the mistake in a sentence, the catalogue's "Mistake:"
	// Failing maps each failing case to its kind (Fail, Race, Panic).
	Failing map[string]string `json:"failing"`
	// From names the programs the catalogue entry was written from
	// ("04-retry/wrong/t3-atomic-check-then-act"): a measure of the
	// diagnosis on those programs leaves the entry out (HeldOut).
	From []string `json:"from,omitempty"`
}

// HeldOut returns table without the entries written from the program
// named by path (any path ending in the "NN-name/kind/program" an entry's
// From gives): diagnosing a program by its own entry would measure
// nothing. The table is returned as it is when no entry came from it.
func HeldOut(table []Signature, path string) []Signature {
	path = filepath.ToSlash(path)
	from := func(s Signature) bool {
		return slices.ContainsFunc(s.From, func(f string) bool {
			return path == f || strings.HasSuffix(path, "/"+f)
		})
	}
	if !slices.ContainsFunc(table, from) {
		return table
	}
	out := make([]Signature, 0, len(table))
	for _, s := range table {
		if !from(s) {
			out = append(out, s)
		}
	}
	return out
}

// Match is a diagnosis: the mistake whose signature is closest to the run's
// failures, and the evidence.
type Match struct {
	Signature
	// Similarity is the weighted Jaccard similarity of the two sets of
	// failing cases (Weight), 1 for the same set.
	Similarity float64 `json:"similarity"`
	// Shared lists the cases that fail in both, in the order of the run's
	// report; Extra those that fail only in the run; Missing those that
	// fail only for the mistake.
	Shared  []string `json:"shared"`
	Extra   []string `json:"extra,omitempty"`
	Missing []string `json:"missing,omitempty"`
	// Also names other mistakes exactly as close, which the run cannot
	// tell apart from this one.
	Also []string `json:"also,omitempty"`
}

// Exact reports whether the run fails exactly the mistake's cases.
func (m Match) Exact() bool { return len(m.Extra) == 0 && len(m.Missing) == 0 }

// Rarity is how much a case tells the table's mistakes apart: ln(1+n/k)
// for a case that k of the table's n signatures fail (k at least 1). A case
// that only one mistake fails is strong evidence for it; a case that most
// mistakes fail (a catch-all like "failing calls are not swallowed", or a
// case that many unrelated bugs disturb) is weak evidence for any one of
// them, and a run that fails it beside a rarer case is told by the rarer
// one.
func Rarity(table []Signature) map[string]float64 {
	df := map[string]int{}
	for _, s := range table {
		for c := range s.Failing {
			df[c]++
		}
	}
	out := make(map[string]float64, len(df))
	for c, k := range df {
		out[c] = math.Log(1 + float64(len(table))/float64(k))
	}
	return out
}

// tie is how close two similarities must be to count as the same: the
// weights are sums of logarithms, added in map order.
const tie = 1e-9

// Diagnose returns the signature in table closest to the run's failing
// cases (case name to kind, in order, only the kinds that Counts), and
// whether it is at least Threshold close and can be named. Each case
// weighs Weight times its Rarity in table (a case no signature fails
// weighs as one that a single signature fails). Ties go to the signature
// whose kinds agree on more shared cases, then to the one failing fewer
// cases the run does not, then to the first in the table; the others as
// close are listed in Also. A tie between mistakes of different concepts,
// or of different rules, is not named (the result is false): the run
// cannot tell which misconception or rule is behind it, and naming one
// would be a guess.
func Diagnose(table []Signature, order []string, failing map[string]string) (Match, bool) {
	if len(failing) == 0 {
		return Match{}, false
	}
	rarity := Rarity(table)
	maxRarity := math.Log(1 + float64(len(table)))
	weight := func(c string) float64 {
		r, ok := rarity[c]
		if !ok {
			r = maxRarity
		}
		return Weight(c) * r
	}
	type scored struct {
		sig                  Signature
		jaccard              float64
		kinds, missing, rank int
	}
	var all []scored
	var runWeight float64
	for c := range failing {
		runWeight += weight(c)
	}
	for i, s := range table {
		var shared, mistakeWeight float64
		kinds, sharedN := 0, 0
		for c := range s.Failing {
			mistakeWeight += weight(c)
		}
		for c, k := range failing {
			if sk, ok := s.Failing[c]; ok {
				shared += weight(c)
				sharedN++
				if sk == k {
					kinds++
				}
			}
		}
		union := runWeight + mistakeWeight - shared
		if sharedN == 0 || union == 0 {
			continue
		}
		all = append(all, scored{s, shared / union, kinds, len(s.Failing) - sharedN, i})
	}
	if len(all) == 0 {
		return Match{}, false
	}
	same := func(a, b float64) bool { return math.Abs(a-b) < tie }
	better := func(a, b scored) int {
		j := 0
		if !same(a.jaccard, b.jaccard) {
			j = cmp.Compare(b.jaccard, a.jaccard)
		}
		return cmp.Or(j, cmp.Compare(b.kinds, a.kinds), cmp.Compare(a.missing, b.missing), cmp.Compare(a.rank, b.rank))
	}
	slices.SortStableFunc(all, better)
	best := all[0]
	m := Match{Signature: best.sig, Similarity: best.jaccard}
	named := true
	for _, o := range all[1:] {
		if same(o.jaccard, best.jaccard) && o.kinds == best.kinds && o.missing == best.missing && o.sig.Summary != best.sig.Summary {
			m.Also = append(m.Also, o.sig.Mistake)
			if !alike(best.sig, o.sig) {
				named = false
			}
		}
	}
	for _, c := range order {
		if _, ok := failing[c]; !ok {
			continue
		}
		if _, ok := best.sig.Failing[c]; ok {
			m.Shared = append(m.Shared, c)
		} else {
			m.Extra = append(m.Extra, c)
		}
	}
	for c := range best.sig.Failing {
		if _, ok := failing[c]; !ok {
			m.Missing = append(m.Missing, c)
		}
	}
	slices.Sort(m.Missing)
	return m, named && best.jaccard >= Threshold-tie
}

// alike reports whether two mistakes a run cannot tell apart share a
// concept and break the same rules: then the feedback's misconception,
// hint, reading and rule are the same whichever it names, and the other
// is listed in Also. Mistakes of one concept that break different rules
// (a failed Load taken for "no record", R4, and a failed Save ignored,
// R3) are different bugs the cases cannot tell apart: naming either would
// be a guess.
func alike(a, b Signature) bool {
	return a.Concept == b.Concept && slices.Equal(sortedRules(a.Rules), sortedRules(b.Rules))
}

func sortedRules(r []string) []string { return slices.Sorted(slices.Values(r)) }

// Sentence is the mistake's summary as one paragraph, its catalogue line
// breaks removed.
func (s Signature) Sentence() string {
	return strings.Join(strings.Fields(s.Summary), " ")
}
