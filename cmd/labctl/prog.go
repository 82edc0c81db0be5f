package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// prog is how the learner runs labctl, for the commands feedback suggests:
// "go run ./cmd/labctl" under go run (and in tests), "labctl" when the
// binary on PATH is this one, else the binary's path.
func (e *env) prog() string {
	exe, err := os.Executable()
	if err != nil || strings.HasSuffix(exe, ".test") || strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/labctl"
	}
	if onPath, err := exec.LookPath(filepath.Base(exe)); err == nil {
		if a, err := filepath.Abs(onPath); err == nil && a == exe {
			return filepath.Base(exe)
		}
	}
	if e.root != "" {
		if rel, err := filepath.Rel(e.root, exe); err == nil && !strings.HasPrefix(rel, "..") {
			return "./" + filepath.ToSlash(rel)
		}
	}
	return exe
}

// firstBuildNote is the line shown before a check when the go command must
// first build the standard library (with the race detector when race is
// set), which takes about a minute once on a fresh machine; it is empty
// when the build cache already holds it. go list -f {{.Stale}} answers in
// a fraction of a second without building anything.
func firstBuildNote(ctx context.Context, root string, race bool) string {
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
	if err != nil || !strings.Contains(string(out), "true") {
		return ""
	}
	if race {
		return "building the race-enabled standard library, once: about a minute..."
	}
	return "building the standard library, once: about half a minute..."
}
