package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/gradebook"
)

type releaseOpts struct {
	out        string
	gradescope string
}

var releaseCmd = &command{
	name:  "release",
	usage: "[--out DIR] [--gradescope FILE.zip]",
	short: "write the student distribution of the kit, or the Gradescope autograder built from it (instructors)",
	long: `
Release writes the kit as students get it into DIR (which must not exist or
be empty): every file of the checkout (the files git tracks, in a git
checkout) except the reference solutions and their catalogued mistakes
(solutions/), the programs kept as suite fixtures (suites/*/testdata/),
the kit's own tests and their inputs (every _test.go file and testdata/
folder outside labs/: the suites' tests hold complete alternative
implementations of the labs), and any file identical to a reference
solution's. labctl builds and check works without them;
the find-the-bug interview drills, which are built from the mistakes, and
verify, which needs the solutions, are left out of the release.
DIR/RELEASE.md lists what was left out; DIR/` + versionFile + ` names the kit
version (the commit it was made from and a hash of its files), which
labctl grade prints in every feedback when the folder is not a git
checkout.

With --gradescope FILE.zip, release also writes (or only writes) the
Gradescope autograder: the same release with Gradescope's setup.sh and
run_autograder at the zip's root. Upload it as the assignment's
autograder; docs/instructors.md says what runs as whom.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &releaseOpts{}
		fs.StringVar(&o.out, "out", "", "directory for the release")
		fs.StringVar(&o.gradescope, "gradescope", "", "also (or only) write the Gradescope autograder zip built from the release to this file")
		return func(ctx context.Context, e *env, args []string) error { return runRelease(ctx, e, o, args) }
	},
}

// versionFile is the release's file naming the kit version.
const versionFile = "LABKIT_VERSION"

// releaseFile is one file of the release: its slash-separated path, its
// contents and its permissions.
type releaseFile struct {
	rel  string
	data []byte
	mode fs.FileMode
}

// releaseExcluded reports whether a kit path (slash-separated, relative) is
// left out of the student release, and why.
func releaseExcluded(rel string) (bool, string) {
	parts := strings.Split(rel, "/")
	switch {
	case parts[0] == "solutions":
		return true, "solutions/: the reference solutions and their catalogued mistakes"
	case parts[0] == ".labkit" || parts[0] == "bin" || parts[0] == ".git":
		return true, ""
	case rel == versionFile || rel == "RELEASE.md":
		return true, "" // written anew for each release
	case len(parts) > 3 && parts[0] == "suites" && parts[2] == "testdata":
		return true, "suites/*/testdata/: the correct and wrong programs kept as suite fixtures (some share files with the solutions; verify --fixtures runs them in the full kit)"
	case len(parts) > 3 && parts[0] == "ops" && parts[1] == "cmd" && (parts[2] == "enginedemo" || parts[2] == "enginebench"):
		return true, "ops/cmd/enginedemo/ and enginebench/: the engine demo and the benchmark against asynq, which run the reference solution"
	case parts[0] == "labs":
		return false, "" // the starters and the test files that run each lab's suite
	case strings.HasSuffix(rel, "_test.go"):
		return true, "the kit's own tests (every _test.go outside labs/): the suites' tests hold complete alternative implementations of the labs"
	case slices.Contains(parts[:len(parts)-1], "testdata"):
		return true, "testdata/ outside labs/: the kit's test inputs, among them programs that implement a lab's API"
	}
	return false, ""
}

func runRelease(ctx context.Context, e *env, o *releaseOpts, args []string) error {
	if len(args) > 0 || (o.out == "" && o.gradescope == "") {
		return usagef("release: want --out DIR or --gradescope FILE.zip, e.g. %s release --out ../labkit-student", e.prog())
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	inside := func(p string) bool {
		rel, err := filepath.Rel(root, p)
		return err == nil && !strings.HasPrefix(rel, "..")
	}
	var out, zipPath string
	if o.out != "" {
		if out, err = filepath.Abs(o.out); err != nil {
			return usagef("release: --out: %v", err)
		}
		if inside(out) {
			return usagef("release: --out %s is inside the kit; choose a folder outside it", o.out)
		}
		if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
			return usagef("release: --out %s is not empty", o.out)
		}
	}
	if o.gradescope != "" {
		if zipPath, err = filepath.Abs(o.gradescope); err != nil {
			return usagef("release: --gradescope: %v", err)
		}
		if !strings.HasSuffix(zipPath, ".zip") {
			return usagef("release: --gradescope %s: want a file name ending in .zip", o.gradescope)
		}
		if inside(zipPath) {
			return usagef("release: --gradescope %s is inside the kit; choose a file outside it", o.gradescope)
		}
	}
	files, err := releaseFiles(ctx, root)
	if err != nil {
		return err
	}
	if out != "" {
		if err := writeReleaseDir(out, files); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote the student release to %s: %d files; %s lists what was left out\n", o.out, len(files), filepath.Join(o.out, "RELEASE.md"))
	}
	if zipPath != "" {
		n, size, err := writeGradescopeZip(zipPath, files)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote the Gradescope autograder to %s (%d files, %.2f MB): the student release with setup.sh, run_autograder and %s at its root; upload it as the assignment's autograder\n", o.gradescope, n, float64(size)/1e6, unavailableFile)
	}
	return nil
}

// releaseFiles reads the release from the kit at root: the files kept,
// then RELEASE.md (what was left out) and versionFile (the kit version),
// sorted by path.
func releaseFiles(ctx context.Context, root string) ([]releaseFile, error) {
	paths, err := kitFiles(ctx, root)
	if err != nil {
		return nil, err
	}
	// Whatever the paths, no file may carry a reference solution's code.
	solution := map[[32]byte]bool{}
	for _, rel := range paths {
		if strings.HasPrefix(rel, "solutions/") && strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			if data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
				solution[sha256.Sum256(data)] = true
			}
		}
	}
	reasons := map[string]bool{}
	var files []releaseFile
	// The starters come from the kit's pristine copy, never from labs/,
	// where the kit's owner may have worked a lab.
	starter := map[string]string{}
	for _, l := range course.Built() {
		for name, data := range l.Starter {
			starter["labs/"+l.Dir+"/"+name] = data
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(starter)) {
		files = append(files, releaseFile{rel: rel, data: []byte(starter[rel]), mode: 0o644})
	}
	for _, rel := range paths {
		if skip, why := releaseExcluded(rel); skip {
			if why != "" {
				reasons[why] = true
			}
			continue
		}
		if _, ok := starter[rel]; ok {
			continue
		}
		if strings.HasPrefix(rel, "labs/") && strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			reasons["Go files in labs/ that are not part of a starter (work in progress in this checkout)"] = true
			continue
		}
		src := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		if solution[sha256.Sum256(data)] {
			reasons["files identical to a reference solution's, wherever they are ("+rel+", ...)"] = true
			continue
		}
		files = append(files, releaseFile{rel: rel, data: data, mode: fi.Mode().Perm()})
	}
	var left []string
	for r := range reasons {
		left = append(left, "- "+r)
	}
	sort.Strings(left)
	note := "# Student release\n\nThis copy of the kit is the student distribution. Left out:\n\n" + strings.Join(left, "\n") +
		"\n\nSo `labctl verify` and the find-the-bug interview drills (built from the catalogued mistakes) are not available here; " +
		"`labctl check`, `hint`, `list`, `docs`, `watch` and the other interview drills work as in the full kit.\n"
	files = append(files, releaseFile{rel: "RELEASE.md", data: []byte(note), mode: 0o644})
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	version := fmt.Sprintf("%s (content %s)\n", kitCommit(ctx, root), contentHash(files))
	files = append(files, releaseFile{rel: versionFile, data: []byte(version), mode: 0o644})
	return files, nil
}

// contentHash is a hash of the files' paths, sizes, permissions and
// contents: two releases with the same hash hold the same bytes.
func contentHash(files []releaseFile) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s %o %d\n", f.rel, f.mode, len(f.data))
		h.Write(f.data)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// kitCommit is the commit of the checkout at root, with "+dirty" when git
// reports uncommitted changes to tracked files; "no git commit" outside
// git.
func kitCommit(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		if v := releaseVersion(root); v != "" {
			commit, _, _ := strings.Cut(v, " ")
			return commit // a release of a release keeps its kit's commit
		}
		return "no git commit"
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		commit += "+dirty"
	}
	return commit
}

// releaseVersion is the kit version a release's versionFile names, or ""
// when root has none.
func releaseVersion(root string) string {
	data, err := os.ReadFile(filepath.Join(root, versionFile))
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line)
}

func writeReleaseDir(out string, files []releaseFile) error {
	for _, f := range files {
		dst := filepath.Join(out, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if err := os.WriteFile(dst, f.data, f.mode); err != nil {
			return fmt.Errorf("release: %w", err)
		}
	}
	return nil
}

// gradescopeEntry lists the autograder files Gradescope wants at the zip's
// root, and where the release holds them.
var gradescopeEntry = map[string]string{"setup.sh": "autograder/setup.sh", "run_autograder": "autograder/run_autograder"}

// unavailableFile is the result run_autograder writes when labctl prints
// none.
const unavailableFile = "results-unavailable.json"

// zipTime is the modification time of every zip entry, so that the same
// release gives the same bytes.
var zipTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// writeGradescopeZip writes the release as Gradescope's autograder zip:
// every file of the release at its path (Gradescope unpacks the zip into
// /autograder/source), and setup.sh and run_autograder at the root,
// executable, and unavailableFile. It returns the number of entries and
// the zip's size.
func writeGradescopeZip(path string, files []releaseFile) (int, int64, error) {
	byPath := map[string]releaseFile{}
	for _, f := range files {
		byPath[f.rel] = f
	}
	entries := slices.Clone(files)
	for _, name := range slices.Sorted(maps.Keys(gradescopeEntry)) {
		f, ok := byPath[gradescopeEntry[name]]
		if !ok {
			return 0, 0, fmt.Errorf("release: the kit has no %s for the Gradescope autograder", gradescopeEntry[name])
		}
		if _, clash := byPath[name]; clash {
			return 0, 0, fmt.Errorf("release: the kit has a file %s at its root, where the Gradescope autograder puts its own", name)
		}
		entries = append(entries, releaseFile{rel: name, data: f.data, mode: 0o755})
	}
	// run_autograder's result when labctl prints none (it is missing, or
	// crashed): made here, in Go, like every JSON the autograder writes.
	unavailable, err := json.MarshalIndent(gradebook.GradescopeFailure("labctl produced no result; the autograder's output, which the instructor sees, says why."), "", "  ")
	if err != nil {
		return 0, 0, fmt.Errorf("release: %w", err)
	}
	if _, clash := byPath[unavailableFile]; clash {
		return 0, 0, fmt.Errorf("release: the kit has a file %s at its root, where the Gradescope autograder puts its own", unavailableFile)
	}
	entries = append(entries, releaseFile{rel: unavailableFile, data: append(unavailable, '\n'), mode: 0o644})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range entries {
		h := &zip.FileHeader{Name: f.rel, Method: zip.Deflate, Modified: zipTime}
		h.SetMode(f.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return 0, 0, fmt.Errorf("release: %w", err)
		}
		if _, err := w.Write(f.data); err != nil {
			return 0, 0, fmt.Errorf("release: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return 0, 0, fmt.Errorf("release: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return 0, 0, fmt.Errorf("release: %w", err)
	}
	return len(entries), int64(buf.Len()), nil
}

// kitFiles lists the kit's files, slash-separated and relative: those git
// tracks in a git checkout, else every file under root.
func kitFiles(ctx context.Context, root string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z")
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range bytes.Split(out, []byte{0}) {
			if len(f) > 0 {
				files = append(files, string(f))
			}
		}
		return files, nil
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skip, _ := releaseExcluded(rel); skip && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		files = append(files, rel)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("release: %w", err)
	}
	return files, nil
}
