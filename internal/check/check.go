// Package check is the body of labctl check: it runs a lab's pristine suite
// on the learner's code in labs/, records the result in the learner's
// progress (.labkit/state.json), and returns the report with what the
// feedback says around it. labctl parses the flags and prints the Result.
package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fourth-outcome/labkit/changelog"
	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/feedback"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/progress"
	"github.com/fourth-outcome/labkit/internal/starter"
	"github.com/fourth-outcome/labkit/internal/usage"
	"github.com/fourth-outcome/labkit/redisaddr"
	"github.com/fourth-outcome/labkit/rubric"
	"github.com/fourth-outcome/labkit/term"
)

// Options say which lab to check, and how.
type Options struct {
	// Root is the kit checkout.
	Root string
	// Lab is the lab to check, a number or a name; "" checks the first
	// lab not passed yet.
	Lab string
	// Race is --race as given: auto (or ""), on or off. ResolveRace
	// decides it (the caller's, so that its note about a missing
	// detector is said once per run).
	Race        string
	ResolveRace func() (bool, error)
	// Redis, when set, is the real server Redis-backed labs run against;
	// CheckRedis checks a server and returns the environment entry that
	// points the suites at it.
	Redis      string
	CheckRedis func(ctx context.Context, addr string) (string, error)
	// Seed, when set, replays a randomised run.
	Seed string
	// Timeout is the suite's time limit, every rerun included;
	// CaseTimeout each case's budget of real time.
	Timeout, CaseTimeout time.Duration
	// Progress shows the run's progress lines on Log.
	Progress bool
	// Prog is how the learner runs labctl ("go run ./cmd/labctl").
	Prog string
	// Wd is the working directory, "" when unknown: notes name files from
	// there.
	Wd string
	// Log receives the notes and the progress lines.
	Log io.Writer
}

// Result is what a check found.
type Result struct {
	// Done is set when no lab was asked for and every lab has passed:
	// nothing was checked.
	Done bool
	// Lab is the lab checked and Report its report.
	Lab    grader.Lab
	Report *grader.Report
	// Markdown are the feedback's options: the hints seen, how to run
	// labctl, whether the suite ran on the real clock.
	Markdown feedback.MarkdownOptions
	// Next is the next step after a pass.
	Next string
	// PassNote says, after a failing check, that an earlier pass under
	// other rules stays on record; "" when there is nothing to say.
	PassNote string
	// Note is said on the log after the feedback, unless the learner
	// asked for quiet: the first verdict ran without the race detector.
	Note string
}

// Run checks the lab o names. Bad input (an unknown lab, an unreachable
// Redis) is a usage error (*usage.Error); a lab that fails is no error.
func Run(ctx context.Context, o Options) (Result, error) {
	root := o.Root
	st, err := progress.Load(root)
	if err != nil {
		return Result{}, err
	}
	var lab grader.Lab
	if o.Lab != "" {
		l, err := course.Find(o.Lab)
		if err != nil {
			return Result{}, usage.Errorf("%v", err)
		}
		lab = l.Lab
	} else {
		var done bool
		if lab, done = st.FirstUnpassed(); done {
			return Result{Done: true, Lab: lab}, nil
		}
	}
	if _, err := os.Stat(filepath.Join(root, "labs", lab.Dir)); err != nil {
		return Result{}, usage.Errorf("lab %s: %v", lab.Dir, err)
	}
	changes, err := starter.Changes(root, lab)
	if err != nil {
		progress.WarnNotSaved(o.Log, "the version of the kit's starters", err, "the next check may repeat a changed-starter notice, or miss one")
	}
	for _, w := range changes {
		fmt.Fprintf(o.Log, "labctl: note: %s\n", w)
	}
	if note := missingTestFile(o.Wd, root, lab); note != "" {
		fmt.Fprintf(o.Log, "labctl: note: %s\n", note)
	}
	race, err := o.ResolveRace()
	if err != nil {
		return Result{}, err
	}
	// On a fresh clone the race-enabled standard library is not built
	// yet: a minute or more on two cores before the first verdict. A lab
	// whose score does not depend on the detector gets that verdict
	// without it, says so, and the library builds in the background for
	// the next check. A pass is only recorded as the detector's: when
	// every case passes, the check runs again with it.
	fastFirst := (o.Race == "auto" || o.Race == "") && race && !detectorScores(lab) && stdStale(ctx, root, true)
	if fastFirst {
		race = false
	}
	// The suite prints a failing case's replay command as the learner
	// runs labctl.
	extraEnv := []string{rubric.ProgEnv + "=" + o.Prog}
	if o.Redis != "" {
		entry, err := o.CheckRedis(ctx, o.Redis)
		if err != nil {
			return Result{}, err
		}
		extraEnv = append(extraEnv, entry)
	} else if addr := os.Getenv(redisaddr.Env); addr != "" && usesRedis(lab) {
		// The suite would use this server too: an unreachable one or a
		// database holding other keys is the environment's problem, one
		// line and exit 2, never a failing lab in the recorded progress.
		if _, err := o.CheckRedis(ctx, addr); err != nil {
			return Result{}, usage.Errorf("%s=%s: %v", redisaddr.Env, addr, errors.Unwrap(err))
		}
	}
	gopts := grader.Options{
		Root:    root,
		Lab:     lab,
		Target:  "labs/" + lab.Dir,
		Race:    race,
		Timeout: o.Timeout,
		Seed:    o.Seed,
		Env:     extraEnv,
		// check and watch rebuild the same lab again and again: a stable
		// binary skips the link when nothing changed.
		CaseTimeout: o.CaseTimeout,
		ReuseBinary: true,
	}
	var bar *term.Progress
	if o.Progress {
		if note := firstBuildNote(ctx, root, race); note != "" {
			fmt.Fprintln(o.Log, note)
		}
		gopts.Progress = o.Log
		if term.IsTerminal(o.Log) && os.Getenv("TERM") != "dumb" {
			// One line that each case's result replaces, gone when the
			// feedback prints: the screen is for the feedback.
			bar = term.NewProgress(o.Log)
			gopts.Progress = bar
		}
		fmt.Fprintf(gopts.Progress, "checking lab %02d %s (%d cases)...\n", lab.Number, lab.Slug, len(lab.Cases))
	}
	rep, err := grader.RunGoTest(ctx, gopts)
	if bar != nil {
		bar.Clear()
	}
	if err != nil {
		return Result{}, err
	}
	if fastFirst && rep.Passed {
		if o.Progress {
			fmt.Fprintln(gopts.Progress, "every case passes without the race detector; checking again with it (its standard library builds once: about a minute)...")
		}
		gopts.Race = true
		rep, err = grader.RunGoTest(ctx, gopts)
		if bar != nil {
			bar.Clear()
		}
		if err != nil {
			return Result{}, err
		}
		fastFirst = false
	}
	res := Result{Lab: lab, Report: rep}
	if fastFirst {
		res.Note = "labctl: note: this first verdict ran without the race detector, whose standard library is not built yet (a data race would not show); it is building in the background, and your next check uses it"
		if err := warmRaceLibrary(root, lab); err != nil {
			res.Note = "labctl: note: this first verdict ran without the race detector, whose standard library is not built yet (a data race would not show); the next check builds it, about a minute"
		}
	}
	if usesRedis(lab) {
		rep.Redis = "embedded miniredis"
		if addr := cmp.Or(o.Redis, os.Getenv(redisaddr.Env)); addr != "" {
			rep.Redis = redisaddr.Describe(addr)
		}
	}

	prev := st.Labs[lab.Dir]
	st.Labs[lab.Dir] = progress.AfterCheck(prev, rep.Score(), rep.Total, rep.Passed, changelog.Level(), time.Now().UTC())
	if err := progress.Save(root, st); err != nil {
		progress.WarnNotSaved(o.Log, fmt.Sprintf("this result (%d/%d)", rep.Score(), rep.Total), err, fmt.Sprintf("`%s list` and a check without a lab do not know it", o.Prog))
	}
	res.Markdown = feedback.MarkdownOptions{HintsSeen: prev.HintLevel, Hints: hintCount(root, lab), Prog: o.Prog,
		// Against a real server the suite runs on the real clock.
		RealTime: usesRedis(lab) && (o.Redis != "" || os.Getenv(redisaddr.Env) != "")}
	res.Next = nextAfterPass(st, lab, o.Prog)
	res.PassNote = passOnRecordNote(st.Labs[lab.Dir], lab.Number)
	return res, nil
}
