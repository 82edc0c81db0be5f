package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/formats"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/check"
	"github.com/fourth-outcome/labkit/term"
)

type checkOpts struct {
	md      bool
	json    bool
	format  string
	seed    string
	race    string
	redis   string
	timeout time.Duration
	// caseTimeout is the real time one case may run before it is stopped
	// and reported as hung (grader.Options.CaseTimeout).
	caseTimeout time.Duration
	html        string
	quiet       bool
}

var checkCmd = &command{
	name:  "check",
	usage: "[flags] [LAB]",
	short: "run a lab's suite on your code and explain what fails",
	long: `
Check runs the lab's conformance suite against your code in labs/NN-name/ and
prints feedback that fits one screen: the score, one line per case, the first
failing case in full (why it matters, what happened, the timeline of the
interleaving, the misconception behind it, what to try, the docs section to
read) and the next step. --md prints the full feedback as Markdown (every
failing case), --json the report, --html FILE a web page whose links point
into the rendered course (labctl docs). --format prints the result in any of
the kit's formats, the ones labctl grade --format prints: term (the default),
md (as --md), json (as --json), gradescope, classroom or csv.

LAB is a number or a name: 1, 01, claim or 01-claim. Without LAB, check picks
the first lab that has not passed yet.

The suite that runs is the kit's own pristine copy: edits to the lab's test
file change nothing. Each case has --case-timeout of real time (10s by
default): a case still running then (a lock never released, a loop that never
ends) is stopped and reported as a timeout, with the line of your code each of
its goroutines was at and whether it was blocked or spinning. A case during
which the test binary crashes (a panic in a goroutine, a fatal error such as
"concurrent map writes") is reported as crashed, with the panic and its line;
one during which it exits (os.Exit) as did not finish. Either way the cases
after it run again in a fresh process, so one hang or crash costs one case. A
case the suite never reached is "not run", with the reason; one it could not
exercise (a race the machine never interleaved, code the harness cannot run)
is "not exercised" and earns nothing. Exit status 0 means every case passes,
1 means some fail, 2 means bad input.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &checkOpts{}
		fs.BoolVar(&o.md, "md", false, "print the full feedback as Markdown (every failing case) instead of the one-screen summary")
		fs.BoolVar(&o.json, "json", false, "write the report as JSON (for tools) instead of feedback")
		fs.StringVar(&o.format, "format", "", "print the result in this format: "+strings.Join(formats.Names(), ", ")+" (--md is md, --json is json)")
		fs.StringVar(&o.seed, "seed", "", "replay a randomised run with this seed (printed by a failing case)")
		fs.StringVar(&o.race, "race", "auto", "race detector: auto (on when cgo works), on, off")
		fs.StringVar(&o.redis, "redis", "", "run Redis-backed labs against this real server (host:port or redis://host:port/db) instead of the embedded one")
		fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up on a suite that runs longer than this, every rerun included")
		fs.DurationVar(&o.caseTimeout, "case-timeout", grader.DefaultCaseTimeout, "stop a case still running after this long and report where your code was (it counts as a timeout; the cases after it run again in a fresh process)")
		fs.StringVar(&o.html, "html", "", "also write the feedback as an HTML page to this file")
		fs.BoolVar(&o.quiet, "quiet", false, "no progress lines on stderr")
		return func(ctx context.Context, e *env, args []string) error { return runCheck(ctx, e, o, args) }
	},
}

func runCheck(ctx context.Context, e *env, o *checkOpts, args []string) error {
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	if len(args) > 1 {
		return usagef("check: one lab at a time (got %d arguments)", len(args))
	}
	if o.caseTimeout < 0 || o.timeout < 0 {
		return usagef("--timeout and --case-timeout must not be negative")
	}
	if o.seed != "" {
		if _, err := strconv.ParseInt(o.seed, 10, 64); err != nil {
			return usagef("--seed %q: want an integer", o.seed)
		}
	}
	format, err := checkFormat(o)
	if err != nil {
		return err
	}
	// A format for tools gets its output alone: no progress, no notes.
	forTools := format.Name != "term" && format.Name != "md"
	lab := ""
	if len(args) == 1 {
		lab = args[0]
	}
	wd, _ := e.getwd() // "" when unknown: kitRoot has read it already
	res, err := check.Run(ctx, check.Options{
		Root:        root,
		Lab:         lab,
		Race:        o.race,
		ResolveRace: func() (bool, error) { return e.raceMode(o.race) },
		Redis:       o.redis,
		CheckRedis:  checkRedis,
		Seed:        o.seed,
		Timeout:     o.timeout,
		CaseTimeout: o.caseTimeout,
		Progress:    !o.quiet && !forTools,
		Prog:        e.prog(),
		Wd:          wd,
		Log:         e.stderr,
	})
	if err != nil {
		return err
	}
	if res.Done {
		fmt.Fprint(e.stdout, courseDone(e.prog()))
		return nil
	}
	if res.Note != "" && !o.quiet {
		defer fmt.Fprintln(e.stderr, res.Note)
	}
	rep := res.Report
	in := formats.Input{
		Student: gradebook.Student{Name: "you", Labs: []gradebook.Result{{Student: "you", Lab: res.Lab, Report: rep}}},
		Class:   gradebook.Options{Labs: []grader.Lab{res.Lab}},
		Learner: true, Markdown: res.Markdown,
		Term: term.Options{
			Color:   term.ColorFor(e.stdout, os.Getenv),
			Width:   term.Width(e.stdout),
			Columns: term.Columns(e.stdout),
			Prog:    e.prog(),
			Next:    res.Next,
		},
	}
	if err := format.Render(e.stdout, in); err != nil {
		return fmt.Errorf("check: --format %s: %w", format.Name, err)
	}
	if !forTools {
		fmt.Fprint(e.stdout, res.PassNote)
	}
	if o.html != "" {
		if err := check.WriteHTML(root, o.html, res); err != nil {
			return err
		}
	}
	if !rep.Passed {
		return errFailed
	}
	return nil
}

// courseDone is what check without a lab says once every lab has passed.
func courseDone(prog string) string {
	built := course.Built()
	planned := len(course.All()) - len(built)
	msg := fmt.Sprintf("Every lab of the course passes (%d of %d).", len(built), len(built))
	if planned > 0 {
		msg += fmt.Sprintf(" %d more labs are planned; a new version of the kit brings them (README: updating the kit).", planned)
	}
	return msg + fmt.Sprintf("\nNext: practise explaining what you built with `%s interview`, or recheck a lab with `%s check N`.\n", prog, prog)
}

// checkFormat is the format check prints in: --format, or --md or --json,
// which name md and json; term without any of them.
func checkFormat(o *checkOpts) (formats.Format, error) {
	name, from := o.format, "--format "+o.format
	for _, alias := range []struct {
		set  bool
		name string
	}{{o.md, "md"}, {o.json, "json"}} {
		if !alias.set {
			continue
		}
		if name != "" && name != alias.name {
			return formats.Format{}, usagef("%s and --%s ask for two formats; give one", from, alias.name)
		}
		name, from = alias.name, "--"+alias.name
	}
	f, err := formats.Lookup(cmp.Or(name, "term"))
	if err != nil {
		return formats.Format{}, usagef("--format: %v", err)
	}
	return f, nil
}
