package mutation

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApply(t *testing.T) {
	src := []byte("package p\n\nfunc f(a, b int) bool {\n\tfor a < b && b != 0 {\n\t\ta++\n\t\tbreak\n\t}\n\treturn a-b >= -1\n}\n")
	tests := []struct {
		m          Mutant
		wantLine   string
		wantChange string
	}{
		{Mutant{File: "p.go", Line: 4, Column: 8, Type: "CONDITIONALS_BOUNDARY"}, "\tfor a <= b && b != 0 {", "< → <="},
		{Mutant{File: "p.go", Line: 4, Column: 8, Type: "CONDITIONALS_NEGATION"}, "\tfor a >= b && b != 0 {", "< → >="},
		{Mutant{File: "p.go", Line: 4, Column: 12, Type: "INVERT_LOGICAL"}, "\tfor a < b || b != 0 {", "&& → ||"},
		{Mutant{File: "p.go", Line: 4, Column: 17, Type: "CONDITIONALS_NEGATION"}, "\tfor a < b && b == 0 {", "!= → =="},
		{Mutant{File: "p.go", Line: 5, Column: 4, Type: "INCREMENT_DECREMENT"}, "\t\ta--", "++ → --"},
		{Mutant{File: "p.go", Line: 6, Column: 3, Type: "INVERT_LOOPCTRL"}, "\t\tcontinue", "break → continue"},
		{Mutant{File: "p.go", Line: 8, Column: 10, Type: "ARITHMETIC_BASE"}, "\treturn a+b >= -1", "- → +"},
		{Mutant{File: "p.go", Line: 8, Column: 16, Type: "INVERT_NEGATIVES"}, "\treturn a-b >= +1", "- → +"},
	}
	for _, tt := range tests {
		got, change, err := tt.m.Apply(src)
		if err != nil {
			t.Errorf("%s.Apply = %v", tt.m.ID(), err)
			continue
		}
		if line := lineOf(got, tt.m.Line); line != tt.wantLine || change != tt.wantChange {
			t.Errorf("%s.Apply = %q (%s), want %q (%s)", tt.m.ID(), line, change, tt.wantLine, tt.wantChange)
		}
	}
	if _, _, err := (Mutant{File: "p.go", Line: 5, Column: 2, Type: "ARITHMETIC_BASE"}).Apply(src); err == nil {
		t.Error("Apply at a position with no arithmetic operator succeeded, want ErrNoSuchToken")
	}
}

func TestReadEquivalents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "equivalent-mutants.txt")
	text := "# survivors no test can tell apart\n\nretry.go:88:12 CONDITIONALS_BOUNDARY: at n = 62 both branches give Cap: same value\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEquivalents(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Equivalents{"retry.go:88:12 CONDITIONALS_BOUNDARY": "at n = 62 both branches give Cap: same value"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadEquivalents mismatch (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(path, []byte("retry.go:88:12 CONDITIONALS_BOUNDARY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadEquivalents(path); err == nil {
		t.Error("ReadEquivalents accepted an entry without a reason")
	}
	if eq, err := ReadEquivalents(filepath.Join(t.TempDir(), "missing.txt")); err != nil || len(eq) != 0 {
		t.Errorf("ReadEquivalents(missing file) = %v, %v; want an empty list", eq, err)
	}
}
