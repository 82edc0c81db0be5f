package course

import (
	"errors"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/render"
)

// kitRoot is the repository root, one level up from this package.
func kitRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

func TestShimsMatchTheFilesOnDisk(t *testing.T) {
	root := kitRoot(t)
	for _, lab := range Built() {
		for _, tree := range []string{"labs", "solutions"} {
			path := filepath.Join(root, tree, lab.Dir, lab.TestFile)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("lab %s: %v", lab.Dir, err)
				continue
			}
			if string(got) != lab.Shim {
				t.Errorf("%s differs from the pristine shim in course/shims/%s.go.txt; the grader would test something else than go test does", path, lab.Dir)
			}
		}
	}
}

// TestStartersMatchTheFilesOnDisk: course/starters is a copy of the
// starters the kit ships in labs/ (make starters writes it). labs/ is the
// learner's workspace, so a lab folder that holds someone's work is not
// the kit's: the comparison runs only on a lab folder git says is as the
// kit committed it, HEAD and its upstream alike (a fresh clone, CI).
func TestStartersMatchTheFilesOnDisk(t *testing.T) {
	root := kitRoot(t)
	for _, lab := range Built() {
		dir := filepath.Join("labs", lab.Dir)
		if why := worked(root, dir); why != "" {
			t.Logf("%s not compared with course/starters: %s", dir, why)
			continue
		}
		onDisk, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		names := map[string]bool{}
		for _, f := range onDisk {
			if name := filepath.Base(f); !strings.HasSuffix(name, "_test.go") {
				names[name] = true
			}
		}
		for name := range lab.Starter {
			names[name] = true
		}
		for name := range names {
			got, err := os.ReadFile(filepath.Join(root, dir, name))
			want, ok := lab.Starter[name]
			switch {
			case err != nil:
				t.Errorf("course/starters/%s/%s.txt has no %s/%s on disk; run make starters", lab.Dir, name, dir, name)
			case !ok:
				t.Errorf("%s/%s is not in course/starters/%s; run make starters", dir, name, lab.Dir)
			case string(got) != want:
				t.Errorf("%s/%s differs from course/starters/%s/%s.txt; run make starters", dir, name, lab.Dir, name)
			}
		}
	}
}

// worked says why dir may hold a learner's work rather than the kit's
// starter: no git to ask, changes against HEAD, or a HEAD whose dir
// differs from its upstream (work committed locally); "" when dir is as
// the kit committed it.
func worked(root, dir string) string {
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		return cmd.Run()
	}
	if err := git("rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return "no git history to tell the kit's starter from a learner's work"
	}
	if err := git("diff", "--quiet", "HEAD", "--", dir); err != nil {
		return "it has changes against HEAD"
	}
	if git("rev-parse", "--verify", "-q", "@{upstream}") == nil {
		if err := git("diff", "--quiet", "@{upstream}", "HEAD", "--", dir); err != nil {
			return "HEAD's copy differs from its upstream's"
		}
	}
	return ""
}

func TestRubricsAreValid(t *testing.T) {
	seen := map[int]bool{}
	for i, lab := range All() {
		if lab.Number != i+1 || seen[lab.Number] {
			t.Errorf("lab %s has number %d at position %d; want course order 1, 2, 3...", lab.Dir, lab.Number, i)
		}
		seen[lab.Number] = true
		if lab.Planned {
			continue
		}
		if err := lab.Validate(); err != nil {
			t.Error(err)
		}
		if got := lab.TotalPoints(); got != 100 {
			t.Errorf("lab %s: points add up to %d, want 100", lab.Dir, got)
		}
		for _, c := range lab.Concepts {
			file, anchor, _ := strings.Cut(c.Docs, "#")
			src, err := os.ReadFile(filepath.Join(kitRoot(t), filepath.FromSlash(file)))
			if err != nil {
				t.Errorf("lab %s concept %s: docs %s: %v", lab.Dir, c.ID, c.Docs, err)
				continue
			}
			page, err := render.Page(file, string(src))
			if err != nil {
				t.Fatal(err)
			}
			if anchor == "" || !strings.Contains(string(page), `id="`+anchor+`"`) {
				t.Errorf("lab %s concept %s: %s has no heading with anchor #%s", lab.Dir, c.ID, file, anchor)
			}
		}
	}
}

func TestFind(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"number", "1", "01-claim"},
		{"padded number", "01", "01-claim"},
		{"slug", "claim", "01-claim"},
		{"directory", "01-claim", "01-claim"},
		{"path", "labs/01-claim/", "01-claim"},
		{"case", "CLAIM", "01-claim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(tt.in)
			if err != nil || got.Dir != tt.want {
				t.Errorf("Find(%q) = %q, %v, want %q, nil", tt.in, got.Dir, err, tt.want)
			}
		})
	}
	for _, l := range All() {
		if !l.Planned {
			continue
		}
		if _, err := Find(strconv.Itoa(l.Number)); !errors.Is(err, ErrPlanned) {
			t.Errorf("Find(%q) error = %v, want %v for a planned lab", strconv.Itoa(l.Number), err, ErrPlanned)
		}
	}
	for _, bad := range []string{"", "0", "99", "nope", "-1"} {
		if _, err := Find(bad); !errors.Is(err, ErrUnknownLab) {
			t.Errorf("Find(%q) error = %v, want %v", bad, err, ErrUnknownLab)
		}
	}
}

func TestMistakesAreCataloguedWithKnownConcepts(t *testing.T) {
	for _, lab := range Built() {
		ms, err := grader.Mistakes(kitRoot(t), lab.Lab)
		if err != nil {
			t.Error(err)
			continue
		}
		if len(ms) < 4 {
			t.Errorf("lab %s has %d catalogued mistakes, want at least 4", lab.Dir, len(ms))
		}
		for _, m := range ms {
			if m.Summary == "" {
				t.Errorf("mistake %s/%s has no summary line", lab.Dir, m.Name)
			}
		}
	}
}

// TestEveryLabProgramUsesOnlyAllowedImports: the starters, the reference
// solutions, the lines the catalogued mistakes add and the fixtures'
// programs import only what their lab's registry entry allows, so the
// grader's import screen refuses none of them.
func TestEveryLabProgramUsesOnlyAllowedImports(t *testing.T) {
	root := kitRoot(t)
	fset := token.NewFileSet()
	for _, lab := range Built() {
		dirs := []string{filepath.Join(root, "labs", lab.Dir), filepath.Join(root, "solutions", lab.Dir)}
		for _, kind := range []string{"wrong", "correct"} {
			progs, _ := filepath.Glob(filepath.Join(root, lab.Fixtures, kind, "*"))
			dirs = append(dirs, progs...)
		}
		for _, dir := range dirs {
			files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
			for _, f := range files {
				if strings.HasSuffix(f, "_test.go") {
					continue
				}
				parsed, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
				if err != nil {
					t.Errorf("%s: %v", f, err)
					continue
				}
				for _, imp := range parsed.Imports {
					path, _ := strconv.Unquote(imp.Path.Value)
					if err := lab.AllowImport(path); err != nil {
						t.Errorf("%s: %v", f, err)
					}
				}
			}
		}
		patches, _ := filepath.Glob(filepath.Join(root, "solutions", lab.Dir, "mistakes", "*.patch"))
		for _, p := range patches {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range addedImport.FindAllStringSubmatch(string(data), -1) {
				if err := lab.AllowImport(m[1]); err != nil {
					t.Errorf("%s adds an import: %v", p, err)
				}
			}
		}
	}
}

// addedImport matches an import line a patch adds: +<tab>"path" or
// +<tab>name "path".
var addedImport = regexp.MustCompile(`(?m)^\+\s+(?:[A-Za-z_][A-Za-z0-9_]*\s+)?"([^"]+)"\s*$`)

// TestImportsRefused: what would let a submission reach the signer or
// read the process's memory is refused in every lab, with a plain reason.
func TestImportsRefused(t *testing.T) {
	for _, lab := range Built() {
		for _, path := range []string{"unsafe", "C", "syscall", "reflect", "runtime/debug", "os/exec", "plugin", "testing", "debug/elf",
			"golang.org/x/sys/unix", "github.com/fourth-outcome/labkit/attest", "github.com/fourth-outcome/labkit/suites/internal/sign",
			"github.com/fourth-outcome/labkit/" + lab.Suite(), "github.com/fourth-outcome/labkit/suites/syncpoint",
			"github.com/fourth-outcome/labkit/suites/syncpoint/atomic",
			"github.com/fourth-outcome/labkit/solutions/" + lab.Dir} {
			err := lab.AllowImport(path)
			if err == nil {
				t.Errorf("lab %s: AllowImport(%q) = nil, want it refused", lab.Dir, path)
				continue
			}
			if !strings.Contains(err.Error(), strconv.Quote(path)) {
				t.Errorf("lab %s: AllowImport(%q) = %q, want the reason to name the import", lab.Dir, path, err)
			}
		}
		if !slices.IsSorted(lab.Imports) {
			t.Errorf("lab %s: Imports not sorted: %v", lab.Dir, lab.Imports)
		}
	}
}
