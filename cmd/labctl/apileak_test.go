package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/course"
)

// shape is a function's name and arity: what code calling it by the
// lab's contract depends on, whatever the parameter types are called.
type shape struct {
	name            string
	params, results int
}

func (s shape) String() string { return fmt.Sprintf("%s(%d)%d", s.name, s.params, s.results) }

// labAPI is what a lab's starter asks the student to write: each exported
// type with exported methods, by its method shapes, and each exported
// function, by its shape.
type labAPI struct {
	lab   string
	types map[string][]shape // starter type name -> its exported methods
	funcs []shape
}

// goPackage is one package of one directory: its methods by receiver type
// and its top-level functions.
type goPackage struct {
	dir, name string
	methods   map[string]map[shape]bool // receiver base type -> methods
	funcs     map[string]shape          // lower-cased name -> shape
	// delegates holds, by receiver base type, the methods whose body calls
	// the method of the same name on something other than the receiver
	// itself (c.inner.Submit(...) in Submit): a wrapper around the
	// student's code, which implements nothing on its own.
	delegates map[string]map[string]bool
}

// delegatesTo reports whether fn's body calls a method named like fn on a
// value other than its receiver.
func delegatesTo(fn *ast.FuncDecl) bool {
	recv := ""
	if fn.Recv != nil && len(fn.Recv.List) > 0 && len(fn.Recv.List[0].Names) > 0 {
		recv = fn.Recv.List[0].Names[0].Name
	}
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if ok && sel.Sel.Name == fn.Name.Name {
			if id, isIdent := sel.X.(*ast.Ident); !isIdent || id.Name != recv {
				found = true
			}
		}
		return !found
	})
	return found
}

// fieldCount counts a parameter or result list as the compiler does: one
// per name, one per unnamed field.
func fieldCount(l *ast.FieldList) int {
	if l == nil {
		return 0
	}
	n := 0
	for _, f := range l.List {
		n += max(1, len(f.Names))
	}
	return n
}

// receiverType is the base type name of a method's receiver: T for T, *T,
// T[K] and *T[K].
func receiverType(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) == 0 {
		return ""
	}
	e := recv.List[0].Type
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// parsePackages parses every .go file under dir (test files included) and
// groups the declarations by directory and package name; skip says which
// directories (slash-separated, relative to dir) to leave out.
func parsePackages(tb testing.TB, dir string, skip func(rel string) bool) []*goPackage {
	tb.Helper()
	pkgs := map[string]*goPackage{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && skip(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", rel, err)
		}
		key := filepath.Dir(rel) + " " + f.Name.Name
		pkg := pkgs[key]
		if pkg == nil {
			pkg = &goPackage{dir: filepath.Dir(rel), name: f.Name.Name, methods: map[string]map[shape]bool{}, funcs: map[string]shape{}, delegates: map[string]map[string]bool{}}
			pkgs[key] = pkg
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			s := shape{fn.Name.Name, fieldCount(fn.Type.Params), fieldCount(fn.Type.Results)}
			if fn.Recv == nil {
				pkg.funcs[strings.ToLower(s.name)] = s
				continue
			}
			t := receiverType(fn.Recv)
			if pkg.methods[t] == nil {
				pkg.methods[t] = map[shape]bool{}
			}
			pkg.methods[t][s] = true
			if delegatesTo(fn) {
				if pkg.delegates[t] == nil {
					pkg.delegates[t] = map[string]bool{}
				}
				pkg.delegates[t][s.name] = true
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("parse %s: %v", dir, err)
	}
	out := make([]*goPackage, 0, len(pkgs))
	for _, p := range pkgs {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir+" "+out[i].name < out[j].dir+" "+out[j].name })
	return out
}

// starterAPI reads a lab's API from its starter's non-test files in
// labDir: the exported types declared there (aliases of task types are
// declared elsewhere and left out) with their exported methods, and the
// exported top-level functions that are not constructors (a constructor,
// a function whose results name one of those types, is nothing without its
// type).
func starterAPI(tb testing.TB, lab, labDir string) labAPI {
	tb.Helper()
	api := labAPI{lab: lab, types: map[string][]shape{}}
	fset := token.NewFileSet()
	entries, err := os.ReadDir(labDir)
	if err != nil {
		tb.Fatal(err)
	}
	declared := map[string]bool{}
	methods := map[string][]shape{}
	type fn struct {
		s       shape
		results *ast.FieldList
	}
	var funcs []fn
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(labDir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatalf("parse %s: %v", n, err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && ts.Assign == 0 && ts.Name.IsExported() {
						if _, isInterface := ts.Type.(*ast.InterfaceType); !isInterface {
							declared[ts.Name.Name] = true
						}
					}
				}
			case *ast.FuncDecl:
				if !d.Name.IsExported() || strings.HasPrefix(d.Name.Name, "Test") {
					continue
				}
				s := shape{d.Name.Name, fieldCount(d.Type.Params), fieldCount(d.Type.Results)}
				if d.Recv == nil {
					funcs = append(funcs, fn{s, d.Type.Results})
				} else {
					t := receiverType(d.Recv)
					methods[t] = append(methods[t], s)
				}
			}
		}
	}
	for t, ms := range methods {
		if declared[t] {
			api.types[t] = ms
		}
	}
	for _, f := range funcs {
		constructor := false
		if f.results != nil {
			ast.Inspect(f.results, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && declared[id.Name] {
					constructor = true
				}
				return !constructor
			})
		}
		if !constructor {
			api.funcs = append(api.funcs, f.s)
		}
	}
	return api
}

// notImplementations are the definitions outside labs/ that match a lab's
// API by the criterion of apiDefinitions and are shipped on purpose, each
// with the reason it gives a student nothing: "dir type-or-func".
var notImplementations = map[string]string{
	"suites/claimsuite checkThenInsert": "the calibration store of the simultaneous-claims case: the check-then-insert bug that case must catch",
	"suites/retrysuite racyBudget":      "the calibration budget of the concurrent-budget case: it loses updates, the bug that case must catch",
	"provider Retryable":                "the provider's classification of its own errors, which lab 04's README names as fitting Policy.Retryable; lab 04's Retryable reads HTTP status codes",
	"provider RetryAfter":               "the provider's own Retry-After hint, which lab 04's README names as fitting Policy.RetryAfter; lab 04's reads the RetryAfterer interface",
}

// apiDefinitions lists where pkg defines part of api. The criterion, stated
// so that a reader can check it by hand:
//   - a type of the starter is defined when pkg declares methods on one
//     type (of any name, exported or not) that include every exported
//     method of the starter's type, each with the same name and the same
//     number of parameters and results (promoted methods are not counted),
//     unless every one of those methods delegates, calling the method of
//     the same name on a value the type holds (a wrapper around the
//     student's code, as the suites' crash-injecting views are);
//   - a function of the starter that is not a constructor is defined when
//     pkg declares a top-level function of the same name, compared without
//     case (so forecastBacklog matches ForecastBacklog), with the same
//     number of parameters and results;
//   - notImplementations lists, with reasons, what matches and is shipped
//     on purpose.
func apiDefinitions(pkg *goPackage, api labAPI) []string {
	var found []string
	for t, want := range api.types {
		for recv, have := range pkg.methods {
			if _, ok := notImplementations[pkg.dir+" "+recv]; ok {
				continue
			}
			all, wrapper := true, true
			for _, m := range want {
				if !have[m] {
					all = false
					break
				}
				if !pkg.delegates[recv][m.name] {
					wrapper = false
				}
			}
			if all && !wrapper {
				found = append(found, fmt.Sprintf("type %s has the method set of lab %s's %s %v", recv, api.lab, t, want))
			}
		}
	}
	for _, f := range api.funcs {
		s, ok := pkg.funcs[strings.ToLower(f.name)]
		if _, allowed := notImplementations[pkg.dir+" "+s.name]; ok && !allowed && s.params == f.params && s.results == f.results {
			found = append(found, fmt.Sprintf("func %s is lab %s's %s", s.name, api.lab, f))
		}
	}
	sort.Strings(found)
	return found
}

// labAPILeaks checks every package of the tree at dir outside labs/ (and
// outside solutions/, which the full kit has on purpose) against every
// lab's starter API, and lists each definition found.
func labAPILeaks(tb testing.TB, dir string) []string {
	tb.Helper()
	var apis []labAPI
	for _, l := range course.Built() {
		apis = append(apis, starterAPI(tb, l.Dir, filepath.Join(dir, "labs", l.Dir)))
	}
	skip := func(rel string) bool {
		first, _, _ := strings.Cut(rel, "/")
		return first == "labs" || first == "solutions" || first == ".git" || first == ".labkit"
	}
	var leaks []string
	for _, pkg := range parsePackages(tb, dir, skip) {
		for _, api := range apis {
			for _, d := range apiDefinitions(pkg, api) {
				leaks = append(leaks, fmt.Sprintf("%s (package %s): %s", pkg.dir, pkg.name, d))
			}
		}
	}
	return leaks
}

// testFilesOutsideLabs lists the _test.go files and testdata/ folders of
// the tree at dir that are outside labs/.
func testFilesOutsideLabs(tb testing.TB, dir string) []string {
	tb.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && rel == "labs":
			return filepath.SkipDir
		case d.IsDir() && d.Name() == "testdata":
			found = append(found, rel+"/")
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(rel, "_test.go"):
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return found
}

// TestStarterAPIIsRead guards the checker itself: every lab's starter has
// an API to look for, and the reference solution of each lab, put where
// the release could hold it, is found.
func TestStarterAPIIsRead(t *testing.T) {
	root := kitRoot(t)
	for _, l := range course.Built() {
		starter := t.TempDir()
		writeTree(t, starter, pristineStarter(t, l.Dir, false))
		api := starterAPI(t, l.Dir, starter)
		if len(api.types) == 0 {
			t.Errorf("starterAPI(%s) has no type with methods; the leak check would find nothing", l.Dir)
		}
		for _, p := range parsePackages(t, filepath.Join(root, "solutions", l.Dir), func(string) bool { return false }) {
			if p.name == l.Package() {
				if got := apiDefinitions(p, api); len(got) < len(api.types)+len(api.funcs) {
					t.Errorf("apiDefinitions(solutions/%s) = %q, want every type and function of the starter found", l.Dir, got)
				}
			}
		}
	}
}

// TestReleaseDefinesNoLabAPI writes the student release and checks that no
// package of it outside labs/ defines any lab's API (see apiDefinitions
// for the criterion): the suites' own tests hold complete alternative
// implementations, which a student could copy with a three-line New.
func TestReleaseDefinesNoLabAPI(t *testing.T) {
	root := kitRoot(t)
	rel := filepath.Join(t.TempDir(), "release")
	if r := labctl(t, root, "release", "--out", rel); r.code != 0 {
		t.Fatalf("release: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range testFilesOutsideLabs(t, rel) {
		t.Errorf("the release has %s, a test file or test input outside labs/", f)
	}
	for _, leak := range labAPILeaks(t, rel) {
		t.Errorf("the release defines a lab's API: %s", leak)
	}
	// The source of the hostile class's release-leak copy (leakCopy) in
	// particular.
	err := filepath.WalkDir(rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		data, err := os.ReadFile(p)
		if strings.Contains(string(data), "func newActorStore(") {
			t.Errorf("the release has %s, which holds the actor-style store of lab 01", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
