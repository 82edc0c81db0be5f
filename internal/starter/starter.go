// Package starter tracks the kit's starters in its git history: a student
// who updates the kit (git pull) gets new starters while their own edits
// stay in labs/. It remembers, per lab, which version of each starter file
// the student's work is based on (.labkit/starters.json), and says when an
// update changed a starter the student has edited.
package starter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fourth-outcome/labkit/grader"
)

// git runs a git command in root and returns its trimmed output.
func git(root string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// Ref is the version of the kit the starters are taken from: the
// branch's upstream (what git pull brings), else origin/HEAD, else HEAD,
// so the student's own commits of their work never count as a new starter.
func Ref(root string) (string, error) {
	for _, ref := range []string{"@{upstream}", "origin/HEAD", "HEAD"} {
		if _, err := git(root, "rev-parse", "--verify", "-q", ref+"^{commit}"); err == nil {
			return ref, nil
		}
	}
	return "", fmt.Errorf("%s is not a git clone of the kit, so its starters cannot be found (reset and the update warnings need git)", root)
}

// Files lists the lab's files at ref with their blob ids.
func Files(root, ref string, lab grader.Lab) (map[string]string, error) {
	out, err := git(root, "ls-tree", "-r", ref, "--", "labs/"+lab.Dir+"/")
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		meta, path, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) == 3 && f[1] == "blob" {
			files[path] = f[2]
		}
	}
	return files, nil
}

// blobOf is the git blob id of the working file, "" if it is missing.
func blobOf(root, path string) string {
	if _, err := os.Stat(filepath.Join(root, path)); err != nil {
		return ""
	}
	id, _ := git(root, "hash-object", "--", path)
	return id
}

func startersPath(root string) string { return filepath.Join(root, ".labkit", "starters.json") }

func loadStarters(root string) map[string]map[string]string {
	m := map[string]map[string]string{}
	if data, err := os.ReadFile(startersPath(root)); err == nil {
		json.Unmarshal(data, &m) // a damaged file only loses the warnings
	}
	return m
}

func saveStarters(root string, m map[string]map[string]string) error {
	data, _ := json.MarshalIndent(m, "", "  ")
	if err := os.MkdirAll(filepath.Dir(startersPath(root)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(startersPath(root), append(data, '\n'), 0o644)
}

// Changes compares the lab's starter Go files at the kit's current
// version with the ones recorded at the last check, records the current
// ones, and returns one warning per starter file that changed while the
// student's copy differs from it (their edits, kept by git). Without git it
// returns nothing. The error says the record could not be saved.
func Changes(root string, lab grader.Lab) ([]string, error) {
	ref, err := Ref(root)
	if err != nil {
		return nil, nil
	}
	now, err := Files(root, ref, lab)
	if err != nil {
		return nil, nil
	}
	all := loadStarters(root)
	before := all[lab.Dir]
	var warnings []string
	var paths []string
	for p := range now {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		old, ok := before[p]
		if !ok || old == now[p] || !strings.HasSuffix(p, ".go") {
			continue
		}
		if work := blobOf(root, p); work != "" && work != now[p] {
			w := fmt.Sprintf("the kit's starter %s changed since your last check (an update of the kit); your edits are kept. ", p)
			if diff, err := starterDiff(root, p, old, now[p]); err == nil {
				w += "What the kit changed in it:\n" + diff
			} else {
				w += fmt.Sprintf("To see what the kit changed in it, run: git diff %.12s %.12s", old, now[p])
			}
			warnings = append(warnings, w)
		}
	}
	if before == nil || len(warnings) > 0 || !sameFiles(before, now) {
		all[lab.Dir] = now
		err = saveStarters(root, all) // only the warnings depend on it
	}
	return warnings, err
}

// maxStarterDiff is how many lines of a changed starter's diff a check
// shows.
const maxStarterDiff = 40

// starterDiff is the unified diff from the starter file path at blob old to
// the one at blob now, labelled with the file's path, at most
// maxStarterDiff lines.
func starterDiff(root, path, old, now string) (string, error) {
	out, err := git(root, "diff", "--no-color", "--no-ext-diff", old, now)
	if err != nil {
		return "", err
	}
	lines := strings.Split(out, "\n")
	for len(lines) > 0 && !strings.HasPrefix(lines[0], "@@") {
		lines = lines[1:] // git's header names the blobs, not the file
	}
	if len(lines) == 0 {
		return "", fmt.Errorf("git diff %.12s %.12s: no changes", old, now)
	}
	if len(lines) > maxStarterDiff {
		lines = append(lines[:maxStarterDiff], fmt.Sprintf("… %d more lines (git diff %.12s %.12s shows them all)", len(lines)-maxStarterDiff, old, now))
	}
	return fmt.Sprintf("--- %s (the starter at your last check)\n+++ %s (the kit's new starter)\n", path, path) + strings.Join(lines, "\n"), nil
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
