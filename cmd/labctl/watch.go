package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/watch"
)

type watchOpts struct {
	check checkOpts
	// settle is how long watch waits after a save for more saves (an
	// editor often writes a file in several steps) before re-running.
	settle time.Duration
	// runStarted and runDone, when set, are called as each check starts
	// and ends (tests and make bench use them).
	runStarted func(lab grader.Lab)
	runDone    func(lab grader.Lab, err error)
}

var watchCmd = &command{
	name:  "watch",
	usage: "[flags] [LAB]",
	short: "re-run a lab's check every time you save one of its files",
	long: `
Watch checks LAB (by default the first lab you have not passed), then checks
it again whenever a file in labs/NN-name/ is saved, showing the feedback in
place. Press a key (on a terminal no Enter is needed; elsewhere end each
key with Enter):

	h   the next hint for this lab
	c   check again now
	n   go on to the next lab
	l   your progress across every lab (labctl list)
	q   quit (Ctrl-C works too)`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &watchOpts{settle: watch.Settle}
		fs.StringVar(&o.check.race, "race", "auto", "race detector: auto (on when cgo works), on, off")
		fs.StringVar(&o.check.redis, "redis", "", "run Redis-backed labs against this real server (host:port or redis://host:port/db)")
		fs.DurationVar(&o.check.timeout, "timeout", 2*time.Minute, "give up on a suite that runs longer than this, every rerun included")
		fs.DurationVar(&o.check.caseTimeout, "case-timeout", grader.DefaultCaseTimeout, "stop a case still running after this long and report where your code was")
		return func(ctx context.Context, e *env, args []string) error { return runWatch(ctx, e, o, args) }
	},
}

func runWatch(ctx context.Context, e *env, o *watchOpts, args []string) error {
	if len(args) > 1 {
		return usagef("watch: one lab at a time (got %d arguments)", len(args))
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	lab := ""
	if len(args) == 1 {
		lab = args[0]
	}
	return watch.Run(ctx, watch.Options{
		Root:   root,
		Lab:    lab,
		Settle: o.settle,
		In:     input(ctx),
		Stdout: e.stdout,
		Stderr: e.stderr,
		Check: func(ctx context.Context, lab grader.Lab) error {
			if o.runStarted != nil {
				o.runStarted(lab)
			}
			co := o.check
			co.quiet = true
			fmt.Fprintf(e.stderr, "checking lab %02d %s...\n", lab.Number, lab.Slug)
			err := runCheck(ctx, e, &co, []string{lab.Dir})
			if o.runDone != nil {
				o.runDone(lab, err)
			}
			if errors.Is(err, errFailed) {
				err = nil
			}
			return err
		},
		Hint: func(ctx context.Context, lab grader.Lab) error { return runHint(ctx, e, []string{lab.Dir}) },
		List: func(ctx context.Context) { runList(ctx, e, nil) },
	})
}
