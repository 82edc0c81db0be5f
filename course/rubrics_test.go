package course

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fourth-outcome/labkit/diagnosis"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/rubric"
	"github.com/fourth-outcome/labkit/suites/ambiguoussuite"
	"github.com/fourth-outcome/labkit/suites/backpressuresuite"
	"github.com/fourth-outcome/labkit/suites/checkpointsuite"
	"github.com/fourth-outcome/labkit/suites/claimsuite"
	"github.com/fourth-outcome/labkit/suites/deadlettersuite"
	"github.com/fourth-outcome/labkit/suites/enginesuite"
	"github.com/fourth-outcome/labkit/suites/fencingsuite"
	"github.com/fourth-outcome/labkit/suites/leasesuite"
	"github.com/fourth-outcome/labkit/suites/redissuite"
	"github.com/fourth-outcome/labkit/suites/retrysuite"
)

var updateRubrics = flag.Bool("update-rubrics", false, "write course/rubrics/*.json from the suites' Lab values")

// suiteRubrics is every suite's own Lab value. Only this test links the
// suites; a built lab missing here fails TestRubricsMatchTheSuites.
var suiteRubrics = []rubric.Lab{
	claimsuite.Lab,
	redissuite.Lab,
	ambiguoussuite.Lab,
	retrysuite.Lab,
	leasesuite.Lab,
	fencingsuite.Lab,
	deadlettersuite.Lab,
	checkpointsuite.Lab,
	backpressuresuite.Lab,
	enginesuite.Lab,
}

// encodeRubric is the form of a rubric in course/rubrics.
func encodeRubric(t testing.TB, r rubric.Lab) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRubricsMatchTheSuites keeps course/rubrics, which labctl reads, equal
// to the rubrics the suites grade by. After changing a suite's cases, run
// make rubrics (go test ./course -run TestRubricsMatchTheSuites
// -update-rubrics).
func TestRubricsMatchTheSuites(t *testing.T) {
	bySuite := map[int]rubric.Lab{}
	for _, r := range suiteRubrics {
		bySuite[r.Number] = r
	}
	for _, lab := range Built() {
		want, ok := bySuite[lab.Number]
		if !ok {
			t.Errorf("lab %s: no suite's Lab in suiteRubrics (rubrics_test.go); add it", lab.Dir)
			continue
		}
		if *updateRubrics {
			path := filepath.Join("rubrics", lab.Dir+".json")
			if err := os.WriteFile(path, encodeRubric(t, want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if diff := cmp.Diff(want, lab.Lab.Lab); diff != "" {
			t.Errorf("course/rubrics/%s.json differs from the suite's Lab (-suite +course/rubrics); run make rubrics:\n%s", lab.Dir, diff)
		}
	}
	if *updateRubrics {
		t.Log("wrote course/rubrics; rebuild to embed them")
	}
}

// TestSignaturesCoverTheCatalogue keeps course/signatures to the mistake
// catalogue: a lab with signatures has one for each of its mistakes, with
// the mistake's concept, rules, summary and From, and none for a mistake that is
// gone; every failing case it names is one of the lab's cases. (Which
// cases a mistake fails is computed by running it: labctl verify
// --write-signatures.)
func TestSignaturesCoverTheCatalogue(t *testing.T) {
	if _, err := os.Stat(filepath.Join(kitRoot(t), "solutions")); err != nil {
		t.Skip("no solutions/ (a student release): no catalogue to compare with")
	}
	for _, lab := range Built() {
		if lab.Signatures == nil {
			continue
		}
		mistakes, err := grader.Mistakes(kitRoot(t), lab.Lab)
		if err != nil {
			t.Fatal(err)
		}
		cases := map[string]bool{}
		for _, c := range lab.Cases {
			cases[c.Name] = true
		}
		have := map[string]diagnosis.Signature{}
		for _, s := range lab.Signatures {
			have[s.Mistake] = s
			for c := range s.Failing {
				if !cases[c] {
					t.Errorf("course/signatures/%s.json: %s fails %q, which is not a case of the lab; run labctl verify --write-signatures %d", lab.Dir, s.Mistake, c, lab.Number)
				}
			}
		}
		for _, m := range mistakes {
			s, ok := have[m.Name]
			if !ok {
				t.Errorf("course/signatures/%s.json has no signature for mistake %s; run labctl verify --write-signatures %d", lab.Dir, m.Name, lab.Number)
				continue
			}
			delete(have, m.Name)
			if s.Concept != m.Concept || s.Summary != m.Summary || !slices.Equal(s.Rules, m.Rules) || !slices.Equal(s.From, m.From) {
				t.Errorf("course/signatures/%s.json: %s's concept, rules, summary or From differ from its patch; run labctl verify --write-signatures %d", lab.Dir, m.Name, lab.Number)
			}
		}
		for name := range have {
			t.Errorf("course/signatures/%s.json has a signature for %s, which is not in the catalogue; run labctl verify --write-signatures %d", lab.Dir, name, lab.Number)
		}
	}
}
