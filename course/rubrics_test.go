package course

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

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
