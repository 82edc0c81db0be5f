package grader

import (
	"bytes"
	"errors"
	"fmt"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// ErrForbiddenCode is wrapped by the reasons a submission's source is
// refused before it is built.
var ErrForbiddenCode = errors.New("the submission uses code it may not use")

// foreignSources are the file name suffixes of source the go command would
// compile or link into a package besides Go: assembly, C and its kin, and
// prebuilt objects. None is part of a lab.
var foreignSources = []string{".s", ".S", ".sx", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".m", ".f", ".F", ".for", ".f90", ".swig", ".swigcxx", ".syso"}

// screenSource checks a submission's files before they are built, the same
// way on every path (check, watch, grade, verify): every import must be one
// the lab allows (Lab.Imports, from the course registry; "unsafe", "C" and
// everything else unlisted are refused), and no file may use //go:linkname,
// which reaches other packages' unexported state. The files are name ->
// contents; others names the directory's files that are neither Go nor
// text (assembly, C, objects), which are refused too.
func screenSource(lab Lab, files map[string][]byte, others []string) error {
	if len(others) > 0 {
		return fmt.Errorf("%w: %s is not Go source: a submission is Go files only (no assembly, C or object files)", ErrForbiddenCode, others[0])
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	fset := token.NewFileSet()
	for _, name := range names {
		src := files[name]
		f, err := goparser.ParseFile(fset, name, src, goparser.ImportsOnly|goparser.ParseComments)
		if err != nil {
			continue // the compiler reports syntax errors better
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if err := lab.AllowImport(path); err != nil {
				return fmt.Errorf("%w: %s: %v", ErrForbiddenCode, name, err)
			}
		}
		if bytes.Contains(src, []byte("//go:linkname")) {
			return fmt.Errorf("%w: %s uses //go:linkname, which is not allowed in a submission", ErrForbiddenCode, name)
		}
	}
	return nil
}

// otherSources lists the files of dir that the go command would build into
// the package besides Go source (see foreignSources).
func otherSources(dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read implementation: %w", err)
	}
	var out []string
	for _, e := range entries {
		if slices.Contains(foreignSources, filepath.Ext(e.Name())) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
