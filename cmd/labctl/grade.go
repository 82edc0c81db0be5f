package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/formats"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/grade"
)

// gradeOpts are labctl grade's flags: grade.Options, and the format
// the class's one submission's result is printed in.
type gradeOpts struct {
	grade.Options
	// race is --race: auto, on or off (see env.raceMode).
	race string
	// format names the format (formats.Lookup) the class's one
	// submission's result is printed in (see runGradeFormat).
	format string
}

var gradeCmd = &command{
	name:  "grade",
	usage: "[flags] [LAB] SUBMISSIONS_DIR",
	short: "grade a folder of student submissions (instructors)",
	long: `
Grade runs the pristine suites of the labs (--labs, all by default; or the
one LAB given before the folder) over every submission in SUBMISSIONS_DIR.
A submission is a folder, a .zip or a .tar.gz named after the student,
holding a lab's .go files (in labs/NN-name/, NN-name/, or loose and matched
by their package name) or a whole copy of the kit. Test files in a
submission are ignored: the kit's own tests always run.

Each submission is graded in a scratch copy of the kit without solutions/
(never in this checkout), its test binary run under bubblewrap when
--sandbox allows, or else confined by Landlock (where the kernel has it)
and run as --run-as, within memory, disk, CPU, output and time limits. A
case still running after --case-timeout is stopped and counts as a
timeout, naming the line of the student's code each goroutine was at
(blocked or spinning); a binary that starts no case by then is stopped
so too, as crashed in init; a case during which the binary crashes
counts as crashed. The cases after
either run again in a fresh process, so one hang or crash costs one case.

For each student it writes OUT/<folder>/feedback.md, feedback.html,
report.json and results.json (Gradescope's format); for the class,
OUT/gradebook.csv, OUT/summary.md and summary.html, and the course pages in
OUT/docs/ that the feedback links to (unless --docs-url). A rerun regrades
only what changed (--force regrades all). Exit status is 0 when every
submission was graded, whatever the scores; 1 when some could not be.

--labs present grades the labs the submissions have files for (files that
differ from the lab's starter), so a one-lab upload is graded out of that
lab alone; with none, every lab.

--format FORMAT grades a class of one submission (the autograders' case)
and prints its result in FORMAT on stdout: gradescope, classroom, or any
other format labctl check prints (term, md, json, csv); the
summary line goes to stderr, and the feedback links the course pages by
their path in the kit (or at --docs-url). gradescope prints Gradescope's
results.json, even when grading fails (then with score 0 and the reason).
classroom prints a "Points X/Y" line and, in a GitHub Actions job, adds the
table of cases to the job summary ($GITHUB_STEP_SUMMARY) and the result for
GitHub Classroom's autograding reporter to the step output "result"
($GITHUB_OUTPUT).`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &gradeOpts{}
		fs.StringVar(&o.Out, "out", "graded", "directory for the feedback and the gradebook")
		fs.StringVar(&o.Labs, "labs", "", "labs to grade: all (default), 3, 1-4, 1,3, or present (those the submissions changed)")
		fs.StringVar(&o.race, "race", "auto", "race detector: auto, on, off")
		fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "time limit per submission and lab, every rerun included")
		fs.DurationVar(&o.CaseTimeout, "case-timeout", grader.DefaultCaseTimeout, "real time one case may run: a case still running then is stopped, reported as a timeout with where the code was, and the cases after it run again in a fresh process")
		fs.IntVar(&o.Jobs, "jobs", 0, "submissions graded at once (0: one per CPU)")
		fs.IntVar(&o.Jobs, "parallel", 0, "alias of --jobs")
		fs.StringVar(&o.Redis, "redis", "", "run Redis-backed labs against this real server (host:port)")
		fs.StringVar(&o.Sandbox, "sandbox", "auto", "where test binaries run: auto (bwrap when it works), bwrap, off")
		fs.StringVar(&o.Seed, "seed", "", "seed for every suite (default: each case's fixed seed)")
		fs.BoolVar(&o.Force, "force", false, "regrade every submission, even those graded before with the same inputs")
		fs.StringVar(&o.DocsURL, "docs-url", "", "where the course site is hosted; feedback links there instead of OUT/docs/")
		fs.IntVar(&o.Memory, "memory", 2048, "resident memory each run may use, in MiB")
		fs.IntVar(&o.Disk, "disk", grader.DefaultDisk>>20, "what each run may write (its directory and /tmp), in MiB")
		fs.StringVar(&o.RunAs, "run-as", "", "user test binaries run as without bwrap (the grader must be root; default nobody when it is)")
		fs.StringVar(&o.Weights, "weights", "", "per-lab weights in the total, e.g. 1=1,2=2 (default 1 each)")
		fs.StringVar(&o.format, "format", "", "print the one submission's result in this format: "+strings.Join(formats.Names(), ", "))
		fs.StringVar(&o.Students, "student", "", "regrade only these students (names, LMS IDs, entries or folders, comma-separated); everyone else's outputs in --out are kept")
		fs.BoolVar(&o.Prune, "prune", false, "drop from --out the students who are no longer in SUBMISSIONS_DIR")
		fs.StringVar(&o.Shard, "shard", "", "grade share I of N of the class (I/N, e.g. 2/4); join the shards' --out folders with labctl gradebook merge")
		fs.StringVar(&o.KitVersion, "kit-version", "", "refuse to grade unless the kit is this version (a commit or its prefix, or a release's version)")
		fs.StringVar(&o.Deadline, "deadline", "", "the deadline, e.g. 2026-03-01T23:59:00Z (default: none, nothing is late)")
		fs.Float64Var(&o.LatePerDay, "late-per-day", 10, "percent of the total taken off per day begun after the deadline")
		fs.Float64Var(&o.LateCap, "late-cap", 50, "most percent taken off for lateness")
		fs.StringVar(&o.Extensions, "extensions", "", "file of per-student extensions, a STUDENT,DURATION line each (48h, 2d)")
		fs.StringVar(&o.Submitted, "submitted", "", "CSV of submission times exported from the LMS (default: the time in a Blackboard name, else each entry's modification time)")
		return func(ctx context.Context, e *env, args []string) error { return runGrade(ctx, e, o, args) }
	},
}

func runGrade(ctx context.Context, e *env, o *gradeOpts, args []string) error {
	if o.format != "" {
		return runGradeFormat(ctx, e, o, args)
	}
	res, err := gradeClass(ctx, e, o, args)
	if err != nil {
		return err
	}
	return gradeSummary(e, e.stdout, o, res)
}

// gradeClass checks grade's arguments and runs grade.Run with them, its
// notes and progress on e.stderr.
func gradeClass(ctx context.Context, e *env, o *gradeOpts, args []string) (grade.Result, error) {
	opts := o.Options
	switch len(args) {
	case 1:
		opts.Class = args[0]
	case 2:
		if o.Labs != "" {
			return grade.Result{}, usagef("grade: give either LAB or --labs, not both")
		}
		opts.Labs, opts.Class = args[0], args[1]
	default:
		return grade.Result{}, usagef("grade: want [LAB] SUBMISSIONS_DIR, e.g. %s grade --labs 1-4 ./submissions", e.prog())
	}
	root, err := e.kitRoot()
	if err != nil {
		return grade.Result{}, err
	}
	opts.Root = root
	opts.Release = releaseVersion(root)
	opts.Race = func() (bool, error) { return e.raceMode(o.race) }
	opts.CheckRedis = checkRedis
	opts.Format = o.format
	opts.Log = e.stderr
	return grade.Run(ctx, opts)
}

// gradeSummary prints the line that ends a grading on stdout, and which
// submissions could not be graded on e.stderr (then errFailed).
func gradeSummary(e *env, stdout io.Writer, o *gradeOpts, res grade.Result) error {
	fmt.Fprintf(stdout, "graded %d of %d submissions over %d lab(s) in %s (%d runs reused from the last grading): feedback in %s/<folder>/, gradebook in %s\n",
		len(res.Students)-res.NotGraded, len(res.Students), res.Labs, res.Elapsed.Round(time.Second), res.Reused, o.Out, filepath.Join(o.Out, "gradebook.csv"))
	if res.NotGraded > 0 {
		fmt.Fprintf(e.stderr, "%d submission(s) could not be graded (see the status column of gradebook.csv)\n", res.NotGraded)
		return errFailed
	}
	return nil
}
