package grader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/rubric"
)

func TestTraceRules(t *testing.T) {
	root := t.TempDir()
	lab := Lab{Dir: "01-demo", Lab: rubric.Lab{Number: 1, Slug: "demo", Cases: []rubric.Case{
		{Name: "a", Rules: []string{"R1"}},
		{Name: "b", Rules: []string{"R2"}},
	}}}
	if err := os.MkdirAll(filepath.Join(root, "labs", lab.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	readme := "# Demo\n\n## Rules\n\n- **R1.** One thing.\n- **R2.** Another\n  thing.\n"
	if err := os.WriteFile(filepath.Join(root, "labs", lab.Dir, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	mistake := func(name string, rules []string, failing ...string) Check {
		rep := &Report{}
		for _, f := range failing {
			rep.Cases = append(rep.Cases, CaseResult{Name: f, Status: StatusFail})
		}
		return Check{Lab: lab, Kind: "mistake", Name: name, Report: rep, m: &Mistake{Name: name, Rules: rules}}
	}
	good := []Check{mistake("m1", []string{"R1"}, "a"), mistake("m2", []string{"R2"}, "b", "a")}
	if c := traceRules(root, lab, good); !c.OK {
		t.Errorf("traceRules(every rule traced) = %s, want ok", c.Detail)
	}
	tests := []struct {
		name   string
		lab    Lab
		checks []Check
		want   string
	}{
		{"rule without a mistake", lab, good[:1], "R2 has no catalogued mistake"},
		{"mistake caught only by another rule's case", lab, []Check{good[0], mistake("m2", []string{"R2"}, "a")}, "R2 has no catalogued mistake"},
		{"mistake naming no rule", lab, append([]Check{mistake("m3", nil, "a")}, good...), "mistake m3 names no rule"},
		{"mistake naming an unknown rule", lab, append([]Check{mistake("m3", []string{"R9"}, "a")}, good...), "mistake m3 names R9"},
		{"case naming an unknown rule", Lab{Dir: lab.Dir, Lab: rubric.Lab{Cases: []rubric.Case{{Name: "a", Rules: []string{"R1"}}, {Name: "b", Rules: []string{"R2"}}, {Name: "c", Rules: []string{"R3"}}}}}, good, "case c names R3"},
		{"rule without a case", Lab{Dir: lab.Dir, Lab: rubric.Lab{Cases: []rubric.Case{{Name: "a", Rules: []string{"R1"}}}}}, good, "R2 has no case"},
	}
	for _, tt := range tests {
		c := traceRules(root, tt.lab, tt.checks)
		if c.OK || !strings.Contains(c.Detail, tt.want) {
			t.Errorf("traceRules(%s) = ok %v, %q; want a failure saying %q", tt.name, c.OK, c.Detail, tt.want)
		}
	}
}
