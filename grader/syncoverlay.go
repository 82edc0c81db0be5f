package grader

import (
	"fmt"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strconv"
)

// SyncPointPackage is the package the grader substitutes for "sync" in a
// submission's files when its lab asks for it (Lab.InstrumentSync).
const SyncPointPackage = "github.com/fourth-outcome/labkit/suites/syncpoint"

// instrumentSync returns src with its import of "sync" pointing at
// SyncPointPackage under the name the file uses for it (sync, or its own
// alias), so that the suite can schedule the file's mutex operations. Only
// the import's path changes; every line keeps its number. It reports
// whether the file imported "sync" at all; a file that does not parse is
// returned unchanged, for the compiler to report.
func instrumentSync(src []byte) ([]byte, bool) {
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, "", src, goparser.ImportsOnly)
	if err != nil {
		return src, false
	}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil || path != "sync" {
			continue
		}
		start := fset.Position(imp.Path.Pos()).Offset
		end := fset.Position(imp.Path.End()).Offset
		repl := strconv.Quote(SyncPointPackage)
		if imp.Name == nil {
			repl = "sync " + repl
		}
		out := make([]byte, 0, len(src)+len(repl))
		out = append(out, src[:start]...)
		out = append(out, repl...)
		out = append(out, src[end:]...)
		return out, true
	}
	return src, false
}

// instrumentedCopy writes the instrumented version of the file at path to
// the grader's cache and returns the copy's path, or path itself when the
// file does not import "sync".
func instrumentedCopy(path string, read func(string) ([]byte, error)) (string, error) {
	src, err := read(path)
	if err != nil {
		return "", fmt.Errorf("instrument %s: %w", path, err)
	}
	out, ok := instrumentSync(src)
	if !ok {
		return path, nil
	}
	return writeCached(filepath.Base(path), out)
}
