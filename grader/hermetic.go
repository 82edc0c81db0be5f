package grader

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Kit is a pristine scratch copy of the kit that submissions are graded in,
// so that nothing a submission does can reach the instructor's checkout. It
// holds go.mod, go.sum and exactly the packages the labs and their suites
// import; it has no solutions/, no mistake catalogue, no cmd/ and no grader,
// so a submission that imports the reference solution does not build.
type Kit struct {
	// Dir is the copy, the module root the test binaries are built in.
	Dir string
	// Scratch is the directory holding Dir and every run's private
	// directory; Close removes it.
	Scratch string
	// Commit is the commit of the checkout the copy was made from, with
	// "+dirty" when it had uncommitted changes, or "unknown" outside git.
	Commit string
	// Module is the kit's module path.
	Module string
	// Attests is set when the labs' suites sign their verdicts (package
	// attest is among their dependencies): then a case counts as passed
	// only with a valid signature.
	Attests bool
	// Content is a hash of the copy's files and the commit: what a grade
	// depends on from the kit.
	Content string

	// builds holds a *sync.Mutex per test binary key, so that identical
	// submissions (unchanged starters, copies) link their binary once.
	builds sync.Map
}

// ErrKit is wrapped by errors about making the scratch copy of the kit.
var ErrKit = errors.New("cannot make the scratch copy of the kit")

// NewKit copies the packages the labs need from the checkout at root into a
// new directory under scratchBase (the system temporary directory when
// empty).
func NewKit(root, scratchBase string) (*Kit, error) {
	modData, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKit, err)
	}
	module := modulePathOf(modData)
	// The labs and their suites, and the packages the grader may point a
	// submission's "sync" and "sync/atomic" imports at.
	cmd := exec.Command("go", "list", "-deps", "-test", "-f", "{{if not .Standard}}{{.ImportPath}}\t{{.Dir}}{{end}}", "./labs/...", SyncPointPackage, SyncPointAtomicPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: go list: %v: %s", ErrKit, err, strings.TrimSpace(stderr.String()))
	}
	dirs := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		path, dir, ok := strings.Cut(line, "\t")
		if !ok || (path != module && !strings.HasPrefix(path, module+"/")) {
			continue
		}
		rel, err := filepath.Rel(root, dir)
		if err != nil || strings.HasPrefix(rel, "..") || forbiddenDir(rel) {
			continue
		}
		dirs[rel] = true
	}
	scratch, err := os.MkdirTemp(scratchBase, "labkit-grade-")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKit, err)
	}
	k := &Kit{Dir: filepath.Join(scratch, "kit"), Scratch: scratch, Module: module, Commit: kitCommit(root), Attests: dirs["attest"]}
	copyErr := func() error {
		for _, f := range []string{"go.mod", "go.sum"} {
			if err := copyRegular(filepath.Join(root, f), filepath.Join(k.Dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		for rel := range dirs {
			entries, err := os.ReadDir(filepath.Join(root, rel))
			if err != nil {
				return err
			}
			for _, e := range entries {
				if !e.Type().IsRegular() {
					continue
				}
				if err := copyRegular(filepath.Join(root, rel, e.Name()), filepath.Join(k.Dir, rel, e.Name())); err != nil {
					return err
				}
			}
		}
		return nil
	}()
	if copyErr != nil {
		os.RemoveAll(scratch)
		return nil, fmt.Errorf("%w: %v", ErrKit, copyErr)
	}
	h := sha256.New()
	fmt.Fprintf(h, "commit %s\n", k.Commit)
	err = filepath.WalkDir(k.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(k.Dir, p)
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		os.RemoveAll(scratch)
		return nil, fmt.Errorf("%w: %v", ErrKit, err)
	}
	k.Content = hex.EncodeToString(h.Sum(nil)[:16])
	return k, nil
}

// Close removes the scratch space.
func (k *Kit) Close() error { return os.RemoveAll(k.Scratch) }

// forbiddenDir reports whether a kit directory must never be in the scratch
// copy: the reference solutions and their mistakes, whatever imports them.
func forbiddenDir(rel string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	switch first {
	case "solutions", "cmd", "grader", "course", "gradebook":
		return true
	}
	return false
}

func modulePathOf(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// kitCommit names the checkout's commit, for reports: a student checks the
// same commit out to reproduce a grade.
func kitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		commit += "+dirty"
	}
	return commit
}

func copyRegular(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

// readSources reads the non-test .go files of base then impl (impl's
// override base's of the same name).
func readSources(base, impl string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, dir := range []string{base, impl} {
		if dir == "" {
			continue
		}
		src, err := goSources(dir)
		if err != nil {
			return nil, err
		}
		for _, f := range src {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("read implementation: %w", err)
			}
			files[filepath.Base(f)] = data
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .go files to grade", impl)
	}
	return files, nil
}

// sourceHash is a short hash of a set of files, name and contents.
func sourceHash(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
