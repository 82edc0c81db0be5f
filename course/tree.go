package course

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ErrTree is wrapped by every problem CheckTree finds.
var ErrTree = errors.New("kit tree does not match the course registry")

// labFolder matches a lab's directory or chapter name, "01-claim".
var labFolder = regexp.MustCompile(`^[0-9]{2}-[a-z0-9]+$`)

// hintFiles are the three hint levels every lab has.
var hintFiles = []string{"1-nudge.md", "2-approach.md", "3-near-solution.md"}

// CheckTree compares the kit checkout at root with the registry labs: every
// lab folder under labs/ and solutions/, every suite under suites/ and every
// chapter under docs/ must belong to a registered lab; every built lab must
// have all of its parts (starter with README, three hints and the shim;
// solution with the shim and at least one catalogued mistake, stored as
// patches only; suite; chapter) and appear in both index tables (README.md
// and docs/README.md); a planned lab must have no folders yet. It returns
// every problem found, joined, or nil.
func CheckTree(root string, labs []Lab) error {
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: %s", ErrTree, fmt.Sprintf(format, args...)))
	}
	byDir := map[string]Lab{}
	bySuite := map[string]Lab{}
	for _, l := range labs {
		byDir[l.Dir] = l
		bySuite[filepath.Base(l.Suite())] = l
	}

	// Folders that belong to no lab, or to a planned one.
	for _, tree := range []string{"labs", "solutions"} {
		for _, name := range dirNames(filepath.Join(root, tree)) {
			l, ok := byDir[name]
			switch {
			case !ok && labFolder.MatchString(name):
				bad("%s/%s is not a registered lab (add a line to course.labs)", tree, name)
			case !ok:
				bad("%s/%s is not a lab folder (lab folders are named NN-slug after a registered lab)", tree, name)
			case l.Planned:
				bad("%s/%s exists but lab %s is registered as planned (register it as built)", tree, name, name)
			}
		}
	}
	for _, name := range dirNames(filepath.Join(root, "suites")) {
		if !strings.HasSuffix(name, "suite") {
			continue // a toolkit package of the suites (suites/syncpoint), not a lab's suite
		}
		if l, ok := bySuite[name]; !ok {
			bad("suites/%s is not the suite of a registered lab (a lab's suite is suites/<slug>suite)", name)
		} else if l.Planned {
			bad("suites/%s exists but lab %s is registered as planned", name, l.Dir)
		}
	}
	chapters, _ := filepath.Glob(filepath.Join(root, "docs", "[0-9][0-9]-*.md"))
	for _, c := range chapters {
		name := strings.TrimSuffix(filepath.Base(c), ".md")
		if l, ok := byDir[name]; !ok {
			bad("docs/%s.md is the chapter of no registered lab", name)
		} else if l.Planned {
			bad("docs/%s.md exists but lab %s is registered as planned", name, name)
		}
	}

	readme := readText(filepath.Join(root, "README.md"))
	index := readText(filepath.Join(root, "docs", "README.md"))
	for _, l := range labs {
		if l.Planned {
			if !strings.Contains(index, fmt.Sprintf("%02d %s", l.Number, l.Slug)) {
				bad("docs/README.md does not list the planned lab %02d %s", l.Number, l.Slug)
			}
			continue
		}
		starter := filepath.Join(root, "labs", l.Dir)
		solution := filepath.Join(root, "solutions", l.Dir)
		need := map[string]string{
			"starter":  filepath.Join(starter, l.TestFile),
			"exercise": filepath.Join(starter, "README.md"),
			"solution": filepath.Join(solution, l.TestFile),
			"suite":    filepath.Join(root, l.Suite()),
			"chapter":  filepath.Join(root, l.Chapter()),
		}
		for _, h := range hintFiles {
			need["hint "+h] = filepath.Join(starter, "hints", h)
		}
		for _, what := range sortedKeys(need) {
			if _, err := os.Stat(need[what]); err != nil {
				bad("lab %s has no %s: %s is missing", l.Dir, what, rel(root, need[what]))
			}
		}
		for _, dir := range []string{starter, solution} {
			if len(goSources(dir)) == 0 {
				bad("lab %s: %s has no .go files besides the shim", l.Dir, rel(root, dir))
			}
		}
		patches, _ := filepath.Glob(filepath.Join(solution, "mistakes", "*.patch"))
		if len(patches) == 0 {
			bad("lab %s has no catalogued mistakes (solutions/%s/mistakes/*.patch)", l.Dir, l.Dir)
		}
		_ = filepath.WalkDir(filepath.Join(solution, "mistakes"), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(path, ".patch") {
				bad("%s: a catalogued mistake is a .patch against the solution, nothing else", rel(root, path))
			}
			return nil
		})
		if !strings.Contains(readme, fmt.Sprintf("| %02d %s |", l.Number, l.Slug)) {
			bad("README.md's table of labs has no row \"| %02d %s | ...\"", l.Number, l.Slug)
		}
		if !hasLayoutRow(readme, l) {
			bad("README.md's layout table has no row for lab %s naming its starter, solution, mistakes, suite, hints and chapter", l.Dir)
		}
		if !strings.Contains(index, "]("+l.Dir+".md)") {
			bad("docs/README.md does not link the chapter %s.md", l.Dir)
		}
	}
	return errors.Join(problems...)
}

// hasLayoutRow reports whether some table row of README names every part of
// the lab.
func hasLayoutRow(readme string, l Lab) bool {
	parts := []string{
		"labs/" + l.Dir + "/",
		"solutions/" + l.Dir + "/",
		"mistakes/",
		l.Suite() + "/",
		"hints/",
		l.Chapter(),
	}
	for _, line := range strings.Split(readme, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		all := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func dirNames(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// goSources lists the non-test .go files of dir.
func goSources(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var out []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	return out
}

func readText(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
