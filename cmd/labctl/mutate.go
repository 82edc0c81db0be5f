package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/mutation"
)

type mutateOpts struct {
	race    string
	jobs    int
	timeout time.Duration
	verbose bool
	listed  bool
}

var mutateCmd = &command{
	name:  "mutate",
	usage: "[flags] [LAB...]",
	short: "mutation-test the reference solutions against their suites (authors, CI)",
	long: `
Mutate is for authors and CI. For every lab (or the labs named) it asks
gremlins (pinned in tools/go.mod) where the reference solution can be mutated
(conditions, boundaries, arithmetic, logic, loop control), applies each
mutant and runs the lab's pristine suite over it through the grader.

A mutant is killed only when it builds and a suite case fails on it; its
suite stops at the first failing case (go test -failfast). Every
mutant that lives must be listed, with a one-line reason, in
suites/<lab>suite/equivalent-mutants.txt ("file.go:line:col TYPE: why no test
can tell it apart"); mutate fails on an unlisted survivor and on a listed
entry that is no longer a survivor. It prints, per lab, killed, lived and not
covered (lines the suite never runs, by gremlins' coverage).`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &mutateOpts{}
		fs.StringVar(&o.race, "race", "off", "race detector for the suite runs: auto, on, off (labs the registry marks as needing it always get it when available)")
		fs.IntVar(&o.jobs, "jobs", 0, "mutants tested at once (0: one per CPU)")
		fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "time limit per mutant's suite run (a mutant that hangs is killed by it)")
		fs.BoolVar(&o.verbose, "v", false, "print every mutant's verdict, not only survivors")
		fs.BoolVar(&o.listed, "listed", false, "judge only the mutants listed as equivalent: a quick check, after a suite gained cases, that each still lives")
		return func(ctx context.Context, e *env, args []string) error { return runMutate(ctx, e, o, args) }
	},
}

func runMutate(ctx context.Context, e *env, o *mutateOpts, args []string) error {
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	labs := course.Built()
	if len(args) > 0 {
		labs = nil
		for _, a := range args {
			l, err := course.Find(a)
			if err != nil {
				return usagef("%v", err)
			}
			labs = append(labs, l)
		}
	}
	race, err := e.raceMode(o.race)
	if err != nil {
		return err
	}
	jobs := o.jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	failed := 0
	for _, lab := range labs {
		labRace := race
		if lab.Race {
			labRace, err = e.raceMode("auto")
			if err != nil {
				return err
			}
		}
		start := time.Now()
		res, err := mutation.Run(ctx, lab.Lab, filepath.Join(root, lab.Suite(), "equivalent-mutants.txt"), mutation.Options{
			Root:         root,
			ToolsModfile: filepath.Join(root, "tools", "go.mod"),
			Race:         labRace,
			Jobs:         jobs,
			Timeout:      o.timeout,
			ListedOnly:   o.listed,
			Progress: func(out mutation.Outcome) {
				if o.verbose || (out.Verdict == mutation.Lived && out.Equivalent == "") {
					fmt.Fprintf(e.stdout, "  %-10s %s %s: %s %v\n", out.Verdict, lab.Dir, out.ID(), out.Change, out.KilledBy)
				}
			},
		})
		if err != nil {
			return fmt.Errorf("mutate %s: %w", lab.Dir, err)
		}
		notCovered, notCoveredLived := 0, 0
		for _, out := range res.Outcomes {
			if !out.Covered {
				notCovered++
				if out.Verdict == mutation.Lived {
					notCoveredLived++
				}
			}
		}
		fmt.Fprintf(e.stdout, "%s: %d mutants: %d killed, %d lived (%d listed as equivalent), %d not viable; %d on lines gremlins saw no test cover (%d of them lived) [%s]\n",
			lab.Dir, len(res.Outcomes), res.Count(mutation.Killed), res.Count(mutation.Lived), res.Count(mutation.Lived)-unlisted(res), res.Count(mutation.NotViable), notCovered, notCoveredLived, time.Since(start).Round(time.Second))
		for _, p := range res.Problems {
			fmt.Fprintf(e.stdout, "  FAIL %s\n", p)
		}
		if len(res.Problems) > 0 {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(e.stdout, "\nmutate: %d of %d labs have unlisted surviving mutants or stale entries\n", failed, len(labs))
		return errFailed
	}
	fmt.Fprintf(e.stdout, "\nmutate: every surviving mutant of %d labs is listed as equivalent\n", len(labs))
	return nil
}

func unlisted(res mutation.Result) int {
	n := 0
	for _, out := range res.Outcomes {
		if out.Verdict == mutation.Lived && out.Equivalent == "" {
			n++
		}
	}
	return n
}
