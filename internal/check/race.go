package check

import (
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/grader"
)

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
