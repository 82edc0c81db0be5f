package grader

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Mistake is one entry of a lab's catalogue of common mistakes: a small
// patch against the lab's reference solution that introduces one realistic
// bug, stored as solutions/<lab>/mistakes/<name>.patch. Before the diff, the
// patch names the concept whose case must catch it and says what the mistake
// is:
//
//	Concept: atomic-claim
//	Rules: R2
//	Mistake: the lookup and the insert are two separately locked steps, so
//	  two callers can both see "no record" and both execute.
//
//	diff --git a/claim.go b/claim.go
//	...
type Mistake struct {
	Name    string   // the file name without .patch, "check-then-insert"
	Path    string   // the patch file
	Concept string   // the concept whose case must fail
	Rules   []string // the lab README's rules the mistake breaks, "R2"
	Summary string   // what the mistake is, in one sentence
	// From names the programs the entry was written from, when it came
	// from one ("From: 04-retry/wrong/t3-atomic-check-then-act", a path
	// under a blind or fixture set): verify holds the entry out of the
	// diagnosis of those programs, so that a measure on them is not a
	// lookup of their own entry.
	From  []string
	Diff  string // the patch itself, from its first "diff" line
	files []*gitdiff.File
}

// ErrBadMistake is wrapped by every error about a catalogue entry: a patch
// that cannot be read, names no concept, or no longer applies.
var ErrBadMistake = errors.New("bad catalogued mistake")

// Mistakes lists the catalogued mistakes of a lab, sorted by name. A patch
// without a "Concept:" line, with a concept the lab does not have, or that
// does not parse is an error: verify could not check it.
func Mistakes(root string, lab Lab) ([]Mistake, error) {
	paths, err := filepath.Glob(filepath.Join(root, "solutions", lab.Dir, "mistakes", "*.patch"))
	if err != nil {
		return nil, fmt.Errorf("mistakes of lab %s: %w", lab.Dir, err)
	}
	sort.Strings(paths)
	var out []Mistake
	for _, p := range paths {
		m, err := ReadMistake(p)
		if err != nil {
			return nil, fmt.Errorf("lab %s: %w", lab.Dir, err)
		}
		if lab.Concept(m.Concept).ID == "" {
			return nil, fmt.Errorf("%w: %s/%s: concept %q is not one of the lab's concepts", ErrBadMistake, lab.Dir, m.Name, m.Concept)
		}
		out = append(out, m)
	}
	return out, nil
}

// ReadMistake reads and parses one catalogue entry.
func ReadMistake(path string) (Mistake, error) {
	m := Mistake{Name: strings.TrimSuffix(filepath.Base(path), ".patch"), Path: path}
	data, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("%w: %v", ErrBadMistake, err)
	}
	files, preamble, err := gitdiff.Parse(bytes.NewReader(data))
	if err != nil {
		return m, fmt.Errorf("%w: %s: %v", ErrBadMistake, m.Name, err)
	}
	if len(files) == 0 {
		return m, fmt.Errorf("%w: %s: the patch changes no file", ErrBadMistake, m.Name)
	}
	for _, f := range files {
		for _, name := range []string{f.OldName, f.NewName} {
			if name != "" && (name != filepath.Base(name) || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go")) {
				return m, fmt.Errorf("%w: %s: it may only change the lab's own .go files, not %q", ErrBadMistake, m.Name, name)
			}
		}
	}
	m.files = files
	m.Diff = string(data[len(preamble):])
	var field *string
	for _, line := range strings.Split(preamble, "\n") {
		switch {
		case strings.HasPrefix(line, "Concept:"):
			m.Concept = strings.TrimSpace(strings.TrimPrefix(line, "Concept:"))
			field = nil
		case strings.HasPrefix(line, "Rules:"):
			for _, r := range strings.FieldsFunc(strings.TrimPrefix(line, "Rules:"), func(c rune) bool { return c == ',' || c == ' ' }) {
				m.Rules = append(m.Rules, r)
			}
			field = nil
		case strings.HasPrefix(line, "From:"):
			for _, f := range strings.FieldsFunc(strings.TrimPrefix(line, "From:"), func(c rune) bool { return c == ',' || c == ' ' }) {
				m.From = append(m.From, f)
			}
			field = nil
		case strings.HasPrefix(line, "Mistake:"):
			m.Summary = strings.TrimSpace(strings.TrimPrefix(line, "Mistake:"))
			field = &m.Summary
		case strings.HasPrefix(line, "  ") && field != nil:
			*field += " " + strings.TrimSpace(line)
		default:
			field = nil
		}
	}
	if m.Concept == "" || m.Summary == "" {
		return m, fmt.Errorf("%w: %s: the patch must start with a \"Concept: <id>\" and a \"Mistake: <what it is>\" line", ErrBadMistake, m.Name)
	}
	return m, nil
}

// Apply returns the files the patch changes, as they are after applying it
// to the solution in solutionDir: base name to contents. An empty content
// means the patch deletes the file. A patch that no longer applies is an
// ErrBadMistake.
func (m Mistake) Apply(solutionDir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range m.files {
		var src []byte
		if !f.IsNew {
			var err error
			if src, err = os.ReadFile(filepath.Join(solutionDir, f.OldName)); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrBadMistake, m.Name, err)
			}
		}
		var dst bytes.Buffer
		if err := gitdiff.Apply(&dst, bytes.NewReader(src), f); err != nil {
			return nil, fmt.Errorf("%w: %s no longer applies to %s: %v (the solution changed; update the patch)", ErrBadMistake, m.Name, f.OldName, err)
		}
		if f.IsDelete {
			out[f.OldName] = nil
			continue
		}
		out[f.NewName] = dst.Bytes()
	}
	return out, nil
}

// Write applies the patch to the solution in solutionDir and writes the
// changed files to a directory in the user cache, named by their contents,
// which it returns: an Impl to lay over the solution.
func (m Mistake) Write(solutionDir string) (string, error) {
	files, err := m.Apply(solutionDir)
	if err != nil {
		return "", err
	}
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
	dir, err := cacheDir("mistake", hex.EncodeToString(h.Sum(nil)[:8]))
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if files[n] == nil {
			return "", fmt.Errorf("%w: %s deletes %s; a mistake may only change files", ErrBadMistake, m.Name, n)
		}
		if err := writeFileAtomic(filepath.Join(dir, n), files[n]); err != nil {
			return "", err
		}
	}
	return dir, nil
}
