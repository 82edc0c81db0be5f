package mutation

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// toyModule writes a module with a solution whose test imports a suite,
// which imports a helper package, plus a page of docs that nothing builds,
// and returns its root.
func toyModule(tb testing.TB) string {
	tb.Helper()
	root := tb.TempDir()
	files := map[string]string{
		"go.mod":                          "module example.com/toy\n\ngo 1.26\n",
		"solutions/00-toy/toy.go":         "package toy\n\nfunc Answer() int { return 42 }\n",
		"solutions/00-toy/toy_test.go":    "package toy\n\nimport (\n\t\"testing\"\n\n\t\"example.com/toy/suites/toysuite\"\n)\n\nfunc TestToy(t *testing.T) { toysuite.Run(t, Answer) }\n",
		"suites/toysuite/toysuite.go":     "package toysuite\n\nimport (\n\t\"testing\"\n\n\t\"example.com/toy/suites/helper\"\n)\n\nfunc Run(t *testing.T, f func() int) {\n\tif f() != helper.Want {\n\t\tt.Fail()\n\t}\n}\n",
		"suites/toysuite/equivalent.txt":  "",
		"suites/helper/helper.go":         "package helper\n\nconst Want = 42\n",
		"labs/00-toy/toy_test.go":         "package toy\n",
		"docs/toy.md":                     "# Toy\n",
		"unrelated/unrelated.go":          "package unrelated\n",
		"tools/go.mod":                    "module example.com/toy/tools\n\ngo 1.26\n",
		"suites/toysuite/testdata/x.json": "{}\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// TestInputsChangeWithWhatTheRunBuilds checks that the inputs hash of a
// lab's mutation run changes with the solution, its suite, the suite's own
// dependencies in the module, the test shim, the equivalents file, the
// gremlins pin and the race mode, and not with files no run builds.
func TestInputsChangeWithWhatTheRunBuilds(t *testing.T) {
	root := toyModule(t)
	ctx := context.Background()
	inputs := func(race bool) string {
		t.Helper()
		h, err := Inputs(ctx, root, "solutions/00-toy", "labs/00-toy/toy_test.go", filepath.Join(root, "suites/toysuite/equivalent.txt"), filepath.Join(root, "tools/go.mod"), race)
		if err != nil {
			t.Fatalf("Inputs = %v", err)
		}
		return h
	}
	base := inputs(false)
	if again := inputs(false); again != base {
		t.Fatalf("Inputs twice on the same tree = %s, then %s, want the same hash", base, again)
	}
	if inputs(true) == base {
		t.Errorf("Inputs with the race detector = the hash without it, want another")
	}
	edit := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"docs/toy.md", "unrelated/unrelated.go", "suites/toysuite/testdata/x.json"} {
		edit(name, "// changed\n")
		if got := inputs(false); got != base {
			t.Errorf("after changing %s, which no run builds: Inputs = %s, want %s", name, got, base)
		}
	}
	for _, change := range []struct{ name, text string }{
		{"suites/helper/helper.go", "package helper\n\nconst Want = 43\n"},
		{"suites/toysuite/toysuite.go", "package toysuite\n\nimport \"testing\"\n\nfunc Run(t *testing.T, f func() int) {}\n"},
		{"solutions/00-toy/toy.go", "package toy\n\nfunc Answer() int { return 43 }\n"},
		{"labs/00-toy/toy_test.go", "package toy\n\n// changed\n"},
		{"suites/toysuite/equivalent.txt", "toy.go:3:30 ARITHMETIC_BASE: why\n"},
		{"tools/go.mod", "module example.com/toy/tools\n\ngo 1.26.1\n"},
		{"go.sum", "example.com/x v1.0.0 h1:abc=\n"},
	} {
		before := inputs(false)
		edit(change.name, change.text)
		if got := inputs(false); got == before {
			t.Errorf("after changing %s: Inputs = %s, the hash before, want another", change.name, got)
		}
	}
}

// TestRecordRoundTrip checks that a written record reads back, and that a
// missing record is the zero Record.
func TestRecordRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecordFile)
	if r, err := ReadRecord(path); err != nil || r != (Record{}) {
		t.Fatalf("ReadRecord(missing) = %+v, %v, want the zero Record, nil", r, err)
	}
	want := Record{Inputs: "0123abcd", Summary: "3 mutants: 2 killed, 1 lived (1 listed as equivalent), 0 not viable"}
	if err := WriteRecord(path, want); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadRecord(path); err != nil || got != want {
		t.Fatalf("ReadRecord(written) = %+v, %v, want %+v", got, err, want)
	}
	if err := os.WriteFile(path, []byte("inputs x\nsomething else\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRecord(path); err == nil {
		t.Errorf("ReadRecord(a line that is neither inputs nor result) = nil error, want one")
	}
}
