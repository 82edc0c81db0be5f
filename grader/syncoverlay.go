package grader

import (
	"fmt"
	goparser "go/parser"
	"go/token"
	"path"
	"path/filepath"
	"slices"
	"strconv"
)

// SyncPointPackage is the package the grader substitutes for "sync" in a
// submission's files when its lab asks for it (Lab.InstrumentSync).
const SyncPointPackage = "github.com/fourth-outcome/labkit/suites/syncpoint"

// SyncPointAtomicPackage is the package the grader substitutes for
// "sync/atomic" in a submission's files when its lab asks for it
// (Lab.InstrumentAtomic).
const SyncPointAtomicPackage = SyncPointPackage + "/atomic"

// instrumented returns the imports the grader points elsewhere in the
// lab's files, each with the package it points it at: none when the lab's
// suite schedules nothing.
func instrumented(lab Lab) map[string]string {
	m := map[string]string{}
	if lab.InstrumentSync {
		m["sync"] = SyncPointPackage
	}
	if lab.InstrumentAtomic {
		m["sync/atomic"] = SyncPointAtomicPackage
	}
	return m
}

// instrumentSync returns src with each of its imports named in subst
// ("sync", "sync/atomic") pointing at the package subst gives for it, under
// the name the file uses for it (sync or atomic, or its own alias), so that
// the suite can schedule the file's mutex or atomic operations. Only the
// imports' paths change, each on its own line: every line keeps its number.
// It reports whether the file imported any of them; a file that does not
// parse is returned unchanged, for the compiler to report.
func instrumentSync(src []byte, subst map[string]string) ([]byte, bool) {
	if len(subst) == 0 {
		return src, false
	}
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, "", src, goparser.ImportsOnly)
	if err != nil {
		return src, false
	}
	type edit struct {
		start, end int
		repl       string
	}
	var edits []edit
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		to, ok := subst[p]
		if !ok {
			continue
		}
		repl := strconv.Quote(to)
		if imp.Name == nil {
			repl = path.Base(p) + " " + repl
		}
		edits = append(edits, edit{fset.Position(imp.Path.Pos()).Offset, fset.Position(imp.Path.End()).Offset, repl})
	}
	if len(edits) == 0 {
		return src, false
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	out := make([]byte, 0, len(src)+64*len(edits))
	at := 0
	for _, e := range edits {
		out = append(out, src[at:e.start]...)
		out = append(out, e.repl...)
		at = e.end
	}
	out = append(out, src[at:]...)
	return out, true
}

// instrumentedCopy writes the instrumented version of the file at path to
// the grader's cache and returns the copy's path, or path itself when the
// file imports none of subst's packages.
func instrumentedCopy(path string, subst map[string]string, read func(string) ([]byte, error)) (string, error) {
	src, err := read(path)
	if err != nil {
		return "", fmt.Errorf("instrument %s: %w", path, err)
	}
	out, ok := instrumentSync(src, subst)
	if !ok {
		return path, nil
	}
	return writeCached(filepath.Base(path), out)
}
