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
	changed bool
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
covered (lines the suite never runs, by gremlins' coverage).

After a clean run of a lab (every survivor listed, no stale entry) it writes
suites/<lab>suite/` + mutation.RecordFile + `: the hash of the run's inputs (the
solution, its suite and every package of the kit they build, go.mod and
go.sum, the lab's test file, the equivalents file, the gremlins pin, the Go
version and the race mode). With --changed, a lab whose inputs still hash to
the recorded value is not run again: CI runs mutate --changed, so a change
to a solution or a suite is mutation-tested on its first CI run, and the
labs nothing touched cost nothing. Commit the record with the change.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &mutateOpts{}
		fs.StringVar(&o.race, "race", "off", "race detector for the suite runs: auto, on, off (labs the registry marks as needing it always get it when available)")
		fs.IntVar(&o.jobs, "jobs", 0, "mutants tested at once (0: one per CPU)")
		fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "time limit per mutant's suite run (a mutant that hangs is killed by it)")
		fs.BoolVar(&o.verbose, "v", false, "print every mutant's verdict, not only survivors")
		fs.BoolVar(&o.listed, "listed", false, "judge only the mutants listed as equivalent: a quick check, after a suite gained cases, that each still lives")
		fs.BoolVar(&o.changed, "changed", false, "skip a lab whose inputs hash to those of its recorded clean run (suites/<lab>suite/"+mutation.RecordFile+"): what CI runs")
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
	failed, skipped := 0, 0
	for _, lab := range labs {
		labRace := race
		if lab.Race {
			labRace, err = e.raceMode("auto")
			if err != nil {
				return err
			}
		}
		equivalents := filepath.Join(root, lab.Suite(), "equivalent-mutants.txt")
		recordPath := filepath.Join(root, lab.Suite(), mutation.RecordFile)
		inputs, err := mutation.Inputs(ctx, root, filepath.Join("solutions", lab.Dir), filepath.Join("labs", lab.Dir, lab.TestFile), equivalents, filepath.Join(root, "tools", "go.mod"), labRace)
		if err != nil {
			return fmt.Errorf("mutate %s: %w", lab.Dir, err)
		}
		if o.changed {
			rec, err := mutation.ReadRecord(recordPath)
			if err != nil {
				return fmt.Errorf("mutate %s: %w", lab.Dir, err)
			}
			if rec.Inputs == inputs {
				fmt.Fprintf(e.stdout, "%s: not run: its inputs are those of its recorded clean run (%s: %s)\n", lab.Dir, inputs[:12], rec.Summary)
				skipped++
				continue
			}
		}
		start := time.Now()
		res, err := mutation.Run(ctx, lab.Lab, equivalents, mutation.Options{
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
		summary := fmt.Sprintf("%d mutants: %d killed, %d lived (%d listed as equivalent), %d not viable; %d on lines gremlins saw no test cover (%d of them lived)",
			len(res.Outcomes), res.Count(mutation.Killed), res.Count(mutation.Lived), res.Count(mutation.Lived)-unlisted(res), res.Count(mutation.NotViable), notCovered, notCoveredLived)
		fmt.Fprintf(e.stdout, "%s: %s [%s]\n", lab.Dir, summary, time.Since(start).Round(time.Second))
		if len(res.Problems) == 0 && !o.listed {
			if err := mutation.WriteRecord(recordPath, mutation.Record{Inputs: inputs, Summary: summary}); err != nil {
				e.warnNotSaved("the record of "+lab.Dir+"'s clean mutation run", err, "the next mutate --changed runs this lab again")
			}
		}
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
	if skipped > 0 {
		fmt.Fprintf(e.stdout, "\nmutate: every surviving mutant of %d labs is listed as equivalent; %d labs not run, their inputs unchanged since their recorded clean run\n", len(labs)-skipped, skipped)
		return nil
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
