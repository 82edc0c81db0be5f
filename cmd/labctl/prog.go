package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/grader"
)

// prog is how the learner runs labctl from where they stand, the prefix of
// every command labctl prints: "go run ./cmd/labctl" under go run (and in
// tests) from the kit root, "go run ../../cmd/labctl" from a lab's folder;
// "labctl" when the binary on PATH is this one; else the binary's path,
// relative to the working directory when it is inside the kit
// ("./bin/labctl" from the root, "../../bin/labctl" from a lab's folder).
// Help texts write commands as "go run ./cmd/labctl ..."; commandsIn
// rewrites them with it.
func (e *env) prog() string {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	wd, _ := e.getwd()
	root, _ := e.kitRoot()
	return progFor(exe, wd, root, exec.LookPath)
}

// progFor is prog for the binary exe run in wd inside the kit at root
// (either may be empty when unknown); lookPath finds a name on PATH.
func progFor(exe, wd, root string, lookPath func(string) (string, error)) string {
	if exe == "" || strings.HasSuffix(exe, ".test") || strings.Contains(exe, string(filepath.Separator)+"go-build") {
		if wd == "" || root == "" {
			return "go run ./cmd/labctl"
		}
		return "go run " + relFrom(wd, filepath.Join(root, "cmd", "labctl"))
	}
	if onPath, err := lookPath(filepath.Base(exe)); err == nil {
		if a, err := filepath.Abs(onPath); err == nil && sameFile(a, exe) {
			return filepath.Base(exe)
		}
	}
	if wd != "" && root != "" {
		// os.Executable has its symbolic links resolved; the working
		// directory may not.
		if r, err := filepath.EvalSymlinks(root); err == nil {
			if w, err := filepath.EvalSymlinks(wd); err == nil {
				root, wd = r, w
			}
		}
		if in, err := filepath.Rel(root, exe); err == nil && in != ".." && !strings.HasPrefix(in, ".."+string(filepath.Separator)) {
			return relFrom(wd, exe)
		}
	}
	return exe
}

// relFrom is target as a path from dir that a shell runs as a command
// ("./bin/labctl", "../../cmd/labctl"), or target when there is none.
func relFrom(dir, target string) string {
	r, err := filepath.Rel(dir, target)
	if err != nil {
		return target
	}
	r = filepath.ToSlash(r)
	if r == ".." || strings.HasPrefix(r, "../") {
		return r
	}
	return "./" + r
}

// sameFile reports whether paths a and b name the same file.
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// commandsIn is a help text with its commands, written as
// "go run ./cmd/labctl ...", shown the way this run was invoked.
func (e *env) commandsIn(text string) string {
	return strings.ReplaceAll(text, "go run ./cmd/labctl", e.prog())
}

// firstBuildNote is the line shown before a check when the go command must
// first build the standard library (with the race detector when race is
// set), which takes about a minute once on a fresh machine; it is empty
// when the build cache already holds it. go list -f {{.Stale}} answers in
// a fraction of a second without building anything.
func firstBuildNote(ctx context.Context, root string, race bool) string {
	if !stdStale(ctx, root, race) {
		return ""
	}
	if race {
		return "building the race-enabled standard library, once: about a minute..."
	}
	return "building the standard library, once: about half a minute..."
}

// stdStale reports whether the standard library's packages a test binary
// needs are not in the build cache yet, built with the race detector when
// race is set: the first build on a fresh machine. It says false when go
// list cannot tell in 20 s.
func stdStale(ctx context.Context, root string, race bool) bool {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	args := []string{"list", "-f", "{{.Stale}}"}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "testing", "runtime")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	return err == nil && strings.Contains(string(out), "true")
}

// detectorScores reports whether some case of lab earns its points only
// with the race detector on (rubric.Case.Race): such a lab's verdict
// waits for the detector.
func detectorScores(lab grader.Lab) bool {
	for _, c := range lab.Cases {
		if c.Race {
			return true
		}
	}
	return false
}

// warmRaceLibrary starts building, in the background, what the next check
// of lab with the race detector needs (the race-enabled standard library
// and the lab's suite), and does not wait: the build goes on after labctl
// exits, and the build cache keeps it. Its output is discarded.
func warmRaceLibrary(root string, lab grader.Lab) error {
	cmd := exec.Command("go", "test", "-race", "-count=1", "-run", "^$", "./suites/"+lab.Slug+"suite/")
	cmd.Dir = root
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
