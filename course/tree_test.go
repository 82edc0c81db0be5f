package course

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/rubric"
)

func TestKitTreeMatchesRegistry(t *testing.T) {
	if err := CheckTree(kitRoot(t), All()); err != nil {
		t.Errorf("CheckTree(kit) = \n%v\nwant nil", err)
	}
}

// demoLabs is a registry of one built lab and one planned lab, for a fake
// kit tree written by writeDemoKit.
var demoLabs = []Lab{
	{Lab: grader.Lab{Lab: rubric.Lab{Number: 1, Slug: "demo", Title: "Demo"}, Dir: "01-demo", TestFile: "demo_test.go", Shim: "package demo\n"}},
	{Lab: grader.Lab{Lab: rubric.Lab{Number: 2, Slug: "later", Title: "Later"}, Dir: "02-later"}, Planned: true},
}

func writeDemoKit(tb testing.TB) string {
	tb.Helper()
	root := tb.TempDir()
	files := map[string]string{
		"labs/01-demo/demo.go":                        "package demo\n",
		"labs/01-demo/demo_test.go":                   "package demo\n",
		"labs/01-demo/README.md":                      "# Demo\n",
		"labs/01-demo/hints/1-nudge.md":               "nudge\n",
		"labs/01-demo/hints/2-approach.md":            "approach\n",
		"labs/01-demo/hints/3-near-solution.md":       "near\n",
		"solutions/01-demo/demo.go":                   "package demo\n",
		"solutions/01-demo/demo_test.go":              "package demo\n",
		"solutions/01-demo/mistakes/off-by-one.patch": "Concept: c\nMistake: m\n",
		"suites/demosuite/demosuite.go":               "package demosuite\n",
		"docs/01-demo.md":                             "# Demo\n",
		"docs/README.md":                              "1. [Demo](01-demo.md)\n\n- 02 later: still to come.\n",
		"README.md": "| lab | what |\n| --- | --- |\n| 01 demo | a demo |\n\n" +
			"| lab | starter | solution | suite | hints | chapter |\n" +
			"| 01 demo | `labs/01-demo/` | `solutions/01-demo/`, `mistakes/*.patch` | `suites/demosuite/` | `hints/` | `docs/01-demo.md` |\n",
	}
	for name, body := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

func TestCheckTreeFindsUnregisteredAndIncompleteLabs(t *testing.T) {
	if err := CheckTree(writeDemoKit(t), demoLabs); err != nil {
		t.Fatalf("CheckTree(complete demo kit) = %v, want nil", err)
	}
	tests := []struct {
		name   string
		change func(root string) error
		want   string
	}{
		{"unregistered lab folder", func(root string) error { return os.MkdirAll(filepath.Join(root, "labs", "03-extra"), 0o755) }, "labs/03-extra is not a registered lab"},
		{"unregistered solution folder", func(root string) error { return os.MkdirAll(filepath.Join(root, "solutions", "03-extra"), 0o755) }, "solutions/03-extra is not a registered lab"},
		{"unregistered suite", func(root string) error { return os.MkdirAll(filepath.Join(root, "suites", "extrasuite"), 0o755) }, "suites/extrasuite is not the suite of a registered lab"},
		{"unregistered chapter", func(root string) error { return os.WriteFile(filepath.Join(root, "docs", "03-extra.md"), nil, 0o644) }, "docs/03-extra.md is the chapter of no registered lab"},
		{"registered lab without a chapter", func(root string) error { return os.Remove(filepath.Join(root, "docs", "01-demo.md")) }, "lab 01-demo has no chapter"},
		{"registered lab without a suite", func(root string) error { return os.RemoveAll(filepath.Join(root, "suites", "demosuite")) }, "lab 01-demo has no suite"},
		{"registered lab without a hint", func(root string) error {
			return os.Remove(filepath.Join(root, "labs", "01-demo", "hints", "2-approach.md"))
		}, "has no hint 2-approach.md"},
		{"registered lab without mistakes", func(root string) error {
			return os.Remove(filepath.Join(root, "solutions", "01-demo", "mistakes", "off-by-one.patch"))
		}, "has no catalogued mistakes"},
		{"a mistake stored as a copy", func(root string) error {
			dir := filepath.Join(root, "solutions", "01-demo", "mistakes", "copy")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "demo.go"), []byte("package demo\n"), 0o644)
		}, "a catalogued mistake is a .patch"},
		{"planned lab with a folder", func(root string) error { return os.MkdirAll(filepath.Join(root, "labs", "02-later"), 0o755) }, "registered as planned"},
		{"lab missing from the README table", func(root string) error {
			return os.WriteFile(filepath.Join(root, "README.md"), []byte("no tables\n"), 0o644)
		}, "README.md's table of labs has no row"},
		{"chapter missing from the docs index", func(root string) error {
			return os.WriteFile(filepath.Join(root, "docs", "README.md"), []byte("- 02 later\n"), 0o644)
		}, "docs/README.md does not link the chapter 01-demo.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeDemoKit(t)
			if err := tt.change(root); err != nil {
				t.Fatal(err)
			}
			err := CheckTree(root, demoLabs)
			if !errors.Is(err, ErrTree) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckTree after %s = %v, want an ErrTree saying %q", tt.name, err, tt.want)
			}
		})
	}
}
