package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

type releaseOpts struct {
	out string
}

var releaseCmd = &command{
	name:  "release",
	usage: "--out DIR",
	short: "write the student distribution of the kit, without solutions (instructors)",
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
DIR/RELEASE.md lists what was left out.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &releaseOpts{}
		fs.StringVar(&o.out, "out", "", "directory for the release (required)")
		return func(ctx context.Context, e *env, args []string) error { return runRelease(ctx, e, o, args) }
	},
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
	case len(parts) > 3 && parts[0] == "suites" && parts[2] == "testdata":
		return true, "suites/*/testdata/: the correct and wrong programs kept as suite fixtures (some share files with the solutions; verify --fixtures runs them in the full kit)"
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
	if len(args) > 0 || o.out == "" {
		return usagef("release: want --out DIR, e.g. labctl release --out ../labkit-student")
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return usagef("release: --out: %v", err)
	}
	if rel, err := filepath.Rel(root, out); err == nil && !strings.HasPrefix(rel, "..") {
		return usagef("release: --out %s is inside the kit; choose a folder outside it", o.out)
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return usagef("release: --out %s is not empty", o.out)
	}
	files, err := kitFiles(ctx, root)
	if err != nil {
		return err
	}
	// Whatever the paths, no file may carry a reference solution's code.
	solution := map[[32]byte]bool{}
	for _, rel := range files {
		if strings.HasPrefix(rel, "solutions/") && strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			if data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
				solution[sha256.Sum256(data)] = true
			}
		}
	}
	reasons := map[string]bool{}
	copied := 0
	for _, rel := range files {
		if skip, why := releaseExcluded(rel); skip {
			if why != "" {
				reasons[why] = true
			}
			continue
		}
		src := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if solution[sha256.Sum256(data)] {
			reasons["files identical to a reference solution's, wherever they are ("+rel+", ...)"] = true
			continue
		}
		dst := filepath.Join(out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		copied++
	}
	var left []string
	for r := range reasons {
		left = append(left, "- "+r)
	}
	sort.Strings(left)
	note := "# Student release\n\nThis copy of the kit is the student distribution. Left out:\n\n" + strings.Join(left, "\n") +
		"\n\nSo `labctl verify` and the find-the-bug interview drills (built from the catalogued mistakes) are not available here; " +
		"`labctl check`, `hint`, `list`, `docs`, `watch` and the other interview drills work as in the full kit.\n"
	if err := os.WriteFile(filepath.Join(out, "RELEASE.md"), []byte(note), 0o644); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	fmt.Fprintf(e.stdout, "wrote the student release to %s: %d files; %s lists what was left out\n", o.out, copied, filepath.Join(o.out, "RELEASE.md"))
	return nil
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
