package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/watch"
)

// watchRun is one check that watch ran.
type watchRun struct {
	lab     string
	started time.Time
	err     error
	done    bool
}

// startWatch runs labctl watch LAB on kit in the background, with the
// returned writer as the keyboard, and reports each check's start and end.
func startWatch(tb testing.TB, kit, lab string) (keys io.WriteCloser, runs <-chan watchRun, finished <-chan error, out *bytes.Buffer) {
	tb.Helper()
	pr, pw := io.Pipe()
	ch := make(chan watchRun, 16)
	fin := make(chan error, 1)
	out = &bytes.Buffer{}
	e := &env{stdout: out, stderr: io.Discard, getwd: func() (string, error) { return kit, nil }}
	o := &watchOpts{
		check:      checkOpts{race: "off", timeout: 2 * time.Minute}, // what is timed is the re-run, not the detector
		settle:     watch.Settle,
		runStarted: func(l grader.Lab) { ch <- watchRun{lab: l.Dir, started: time.Now()} },
		runDone:    func(l grader.Lab, err error) { ch <- watchRun{lab: l.Dir, err: err, done: true} },
	}
	ctx, cancel := context.WithCancel(withInput(context.Background(), pr))
	tb.Cleanup(cancel)
	go func() { fin <- runWatch(ctx, e, o, []string{lab}) }()
	return pw, ch, fin, out
}

// next waits for watch's next report; the limit only stops a broken test
// from hanging, it times nothing.
func next(tb testing.TB, runs <-chan watchRun) watchRun {
	tb.Helper()
	select {
	case r := <-runs:
		return r
	case <-time.After(3 * time.Minute):
		tb.Fatal("watch reported nothing")
		return watchRun{}
	}
}

// TestWatchReRunsOnSave drives watch on a temporary lab copy: the first
// check fails on the starter, saving the solution over it triggers a
// re-run that passes, and q quits.
func TestWatchReRunsOnSave(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite twice")
	}
	t.Parallel()
	kit := copyKit(t)
	lab, _ := course.Find("1")
	keys, runs, finished, out := startWatch(t, kit, "1")
	if r := next(t, runs); r.done || r.lab != lab.Dir {
		t.Fatalf("first report = %+v, want the start of a check of %s", r, lab.Dir)
	}
	if r := next(t, runs); !r.done || !errors.Is(r.err, errFailed) {
		t.Fatalf("first check = %+v, want it to fail on the starter", r)
	}
	copyFile(t, filepath.Join(kit, "solutions", lab.Dir, "claim.go"), filepath.Join(kit, "labs", lab.Dir, "claim.go"))
	if r := next(t, runs); r.done {
		t.Fatalf("after the save: %+v, want a new check to start", r)
	}
	if r := next(t, runs); !r.done || r.err != nil {
		t.Fatalf("check after saving the solution = %+v, want it to pass", r)
	}
	io.WriteString(keys, "q\n")
	select {
	case err := <-finished:
		if err != nil {
			t.Errorf("watch after q = %v, want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("watch did not quit on q")
	}
	if got := out.String(); !strings.Contains(got, "Every case passes") || !strings.Contains(got, "watching labs/01-claim/") {
		t.Errorf("watch output lacks the passing result or the watching line:\n%s", got)
	}
}

// TestWatchRerunLatency measures how soon after a save watch starts the
// re-run and shows its result. It only runs for make bench
// (LABKIT_BENCH_WATCH=1) and asserts nothing about the figures.
func TestWatchRerunLatency(t *testing.T) {
	if os.Getenv("LABKIT_BENCH_WATCH") != "1" {
		t.Skip("a measurement for make bench (LABKIT_BENCH_WATCH=1)")
	}
	kit := copyKit(t)
	lab, _ := course.Find("1")
	keys, runs, finished, _ := startWatch(t, kit, "1")
	next(t, runs)
	next(t, runs)
	file := filepath.Join(kit, "labs", lab.Dir, "claim.go")
	src, _ := os.ReadFile(file)
	for i := range 3 {
		saved := time.Now()
		os.WriteFile(file, append(src, []byte("\n// save "+string(rune('a'+i))+"\n")...), 0o644)
		start := next(t, runs)
		next(t, runs)
		t.Logf("watch: save to re-run start %v, save to result %v", start.started.Sub(saved).Round(time.Millisecond), time.Since(saved).Round(time.Millisecond))
	}
	io.WriteString(keys, "q\n")
	<-finished
}
