package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/changelog"
	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/formats"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/progress"
	"github.com/fourth-outcome/labkit/internal/starter"
	"github.com/fourth-outcome/labkit/redisaddr"
	"github.com/fourth-outcome/labkit/render"
	"github.com/fourth-outcome/labkit/rubric"
	"github.com/fourth-outcome/labkit/site"
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
	st, err := progress.Load(root)
	if err != nil {
		return err
	}
	var lab grader.Lab
	if len(args) == 1 {
		if lab, err = resolveLab(args[0]); err != nil {
			return err
		}
	} else {
		var done bool
		if lab, done = firstUnpassed(st); done {
			fmt.Fprint(e.stdout, courseDone(e.prog()))
			return nil
		}
	}
	if _, err := os.Stat(filepath.Join(root, "labs", lab.Dir)); err != nil {
		return usagef("lab %s: %v", lab.Dir, err)
	}
	changes, err := starter.Changes(root, lab)
	if err != nil {
		e.warnNotSaved("the version of the kit's starters", err, "the next check may repeat a changed-starter notice, or miss one")
	}
	for _, w := range changes {
		fmt.Fprintf(e.stderr, "labctl: note: %s\n", w)
	}
	if note := missingTestFile(e, root, lab); note != "" {
		fmt.Fprintf(e.stderr, "labctl: note: %s\n", note)
	}
	race, err := e.raceMode(o.race)
	if err != nil {
		return err
	}
	// On a fresh clone the race-enabled standard library is not built
	// yet: a minute or more on two cores before the first verdict. A lab
	// whose score does not depend on the detector gets that verdict
	// without it, says so, and the library builds in the background for
	// the next check. A pass is only recorded as the detector's: when
	// every case passes, the check runs again with it.
	fastFirst := (o.race == "auto" || o.race == "") && race && !detectorScores(lab) && stdStale(ctx, root, true)
	if fastFirst {
		race = false
	}
	// The suite prints a failing case's replay command as the learner
	// runs labctl.
	extraEnv := []string{rubric.ProgEnv + "=" + e.prog()}
	if o.redis != "" {
		entry, err := checkRedis(ctx, o.redis)
		if err != nil {
			return err
		}
		extraEnv = append(extraEnv, entry)
	} else if addr := os.Getenv(redisaddr.Env); addr != "" && usesRedis(lab) {
		// The suite would use this server too: an unreachable one or a
		// database holding other keys is the environment's problem, one
		// line and exit 2, never a failing lab in the recorded progress.
		if _, err := checkRedis(ctx, addr); err != nil {
			return usagef("%s=%s: %v", redisaddr.Env, addr, errors.Unwrap(err))
		}
	}
	gopts := grader.Options{
		Root:    root,
		Lab:     lab,
		Target:  "labs/" + lab.Dir,
		Race:    race,
		Timeout: o.timeout,
		Seed:    o.seed,
		Env:     extraEnv,
		// check and watch rebuild the same lab again and again: a stable
		// binary skips the link when nothing changed.
		CaseTimeout: o.caseTimeout,
		ReuseBinary: true,
	}
	var bar *term.Progress
	if !o.quiet && !forTools {
		if note := firstBuildNote(ctx, root, race); note != "" {
			fmt.Fprintln(e.stderr, note)
		}
		gopts.Progress = e.stderr
		if term.IsTerminal(e.stderr) && os.Getenv("TERM") != "dumb" {
			// One line that each case's result replaces, gone when the
			// feedback prints: the screen is for the feedback.
			bar = term.NewProgress(e.stderr)
			gopts.Progress = bar
		}
		fmt.Fprintf(gopts.Progress, "checking lab %02d %s (%d cases)...\n", lab.Number, lab.Slug, len(lab.Cases))
	}
	rep, err := grader.RunGoTest(ctx, gopts)
	if bar != nil {
		bar.Clear()
	}
	if err != nil {
		return err
	}
	if fastFirst && rep.Passed {
		if !o.quiet && !forTools {
			fmt.Fprintln(gopts.Progress, "every case passes without the race detector; checking again with it (its standard library builds once: about a minute)...")
		}
		gopts.Race = true
		rep, err = grader.RunGoTest(ctx, gopts)
		if bar != nil {
			bar.Clear()
		}
		if err != nil {
			return err
		}
		fastFirst = false
	}
	if fastFirst {
		why := "labctl: note: this first verdict ran without the race detector, whose standard library is not built yet (a data race would not show); it is building in the background, and your next check uses it"
		if err := warmRaceLibrary(root, lab); err != nil {
			why = "labctl: note: this first verdict ran without the race detector, whose standard library is not built yet (a data race would not show); the next check builds it, about a minute"
		}
		if !o.quiet {
			defer fmt.Fprintln(e.stderr, why)
		}
	}
	if usesRedis(lab) {
		rep.Redis = "embedded miniredis"
		if addr := cmp.Or(o.redis, os.Getenv(redisaddr.Env)); addr != "" {
			rep.Redis = redisaddr.Describe(addr)
		}
	}

	prev := st.Labs[lab.Dir]
	st.Labs[lab.Dir] = progress.AfterCheck(prev, rep.Score, rep.Total, rep.Passed, changelog.Level(), time.Now().UTC())
	if err := progress.Save(root, st); err != nil {
		e.warnNotSaved(fmt.Sprintf("this result (%d/%d)", rep.Score, rep.Total), err, fmt.Sprintf("`%s list` and a check without a lab do not know it", e.prog()))
	}

	mdo := grader.MarkdownOptions{HintsSeen: prev.HintLevel, Hints: hintCount(root, lab), Prog: e.prog(),
		// Against a real server the suite runs on the real clock.
		RealTime: usesRedis(lab) && (o.redis != "" || os.Getenv(redisaddr.Env) != "")}
	in := formats.Input{
		Student: gradebook.Student{Name: "you", Labs: []gradebook.Result{{Student: "you", Lab: lab, Report: rep}}},
		Class:   gradebook.Options{Labs: []grader.Lab{lab}},
		Learner: true, Markdown: mdo,
		Term: term.Options{
			Color:   term.ColorFor(e.stdout, os.Getenv),
			Width:   term.Width(e.stdout),
			Columns: term.Columns(e.stdout),
			Prog:    e.prog(),
			Next:    nextAfterPass(st, lab, e.prog()),
		},
	}
	if err := format.Render(e.stdout, in); err != nil {
		return fmt.Errorf("check: --format %s: %w", format.Name, err)
	}
	if !forTools {
		fmt.Fprint(e.stdout, passOnRecordNote(st.Labs[lab.Dir], lab.Number))
	}
	if o.html != "" {
		if err := writeFeedbackHTML(root, o.html, rep, lab, mdo); err != nil {
			return err
		}
	}
	if !rep.Passed {
		return errFailed
	}
	return nil
}

// passOnRecordNote says, after a failing check of lab, that an earlier pass
// under other rules stays on record, and which rule changes lie between;
// "" when there is nothing to say.
func passOnRecordNote(s progress.LabState, lab int) string {
	pass, changes := progress.PassedUnderEarlierRules(s, lab)
	if pass == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nYou passed this lab on %s (%d/%d, rules level %d); that pass stays on record. The rules of this lab changed since:\n",
		pass.CheckedAt.Local().Format("2006-01-02"), pass.Score, pass.Total, pass.Rules)
	for _, c := range changes {
		fmt.Fprintf(&b, "  - %s\n", c)
	}
	b.WriteString("See docs/changelog.md.\n")
	return b.String()
}

// missingTestFile says, when the lab's test file is gone from labs/, that
// check grades with the kit's own copy anyway (the grader lays the
// pristine shim over the lab's directory) but an editor's "run test" finds
// no test; "" when the file is there.
func missingTestFile(e *env, root string, lab grader.Lab) string {
	path := filepath.Join(root, "labs", lab.Dir, lab.TestFile)
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	from := path
	if wd, err := e.getwd(); err == nil {
		if r, err := filepath.Rel(wd, path); err == nil {
			from = filepath.ToSlash(r)
		}
	}
	return fmt.Sprintf("labs/%s/%s is missing: check grades with the kit's own copy of it, so this result stands, but your editor's \"run test\" finds no test until you restore it (git checkout -- %s).", lab.Dir, lab.TestFile, from)
}

// firstUnpassed is the first lab whose last recorded check did not pass;
// done is true when every built lab has passed.
func firstUnpassed(st *progress.State) (lab grader.Lab, done bool) {
	built := course.Built()
	for _, l := range built {
		if !st.Labs[l.Dir].Passed {
			return l.Lab, false
		}
	}
	return built[len(built)-1].Lab, true
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

// nextAfterPass is the next step after lab passes: the next lab not yet
// passed, or the end of the course.
func nextAfterPass(st *progress.State, lab grader.Lab, prog string) string {
	for _, l := range course.Built() {
		if l.Number != lab.Number && !st.Labs[l.Dir].Passed {
			return fmt.Sprintf("lab %02d, %s: read labs/%s/README.md, then run `%s check %d`.", l.Number, l.Title, l.Dir, prog, l.Number)
		}
	}
	return "every lab of the course passes: the course is done. `" + prog + " interview` drills you on explaining it."
}

// usesRedis reports whether the registry marks lab as talking to Redis.
func usesRedis(lab grader.Lab) bool {
	l, err := course.Find(lab.Dir)
	return err == nil && l.Redis
}

// hintCount is how many hint files the lab has (0 if it has none).
func hintCount(root string, lab grader.Lab) int {
	files, _ := filepath.Glob(filepath.Join(root, "labs", lab.Dir, "hints", "*.md"))
	return len(files)
}

// writeFeedbackHTML writes the feedback as a page to file, with its links
// pointing into the docs site, which it renders (into .labkit/docs) when
// the site is missing or older than the course.
func writeFeedbackHTML(root, file string, rep *grader.Report, lab grader.Lab, mdo grader.MarkdownOptions) error {
	siteDir := filepath.Join(root, ".labkit", "docs")
	if _, err := site.Build(site.Config{Root: root, Out: siteDir}); err != nil {
		return err
	}
	mdo.SiteBase = relDir(file, siteDir)
	mdo.TimelineFigures = true
	page, err := render.Page(fmt.Sprintf("Lab %02d feedback", lab.Number), grader.Markdown(rep, lab, mdo))
	if err != nil {
		return err
	}
	timelines := map[string][]string{}
	for _, c := range rep.Cases {
		timelines[c.Name] = c.Timeline
	}
	page = render.InlineTimelines(page, timelines)
	if err := os.WriteFile(file, page, 0o644); err != nil {
		return usagef("--html: %v", err)
	}
	return nil
}

// relDir is the path from the directory of file to dir, with a trailing
// slash, for links in a page written to file.
func relDir(file, dir string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return dir + "/"
	}
	rel, err := filepath.Rel(filepath.Dir(abs), dir)
	if err != nil {
		return filepath.ToSlash(dir) + "/"
	}
	return filepath.ToSlash(rel) + "/"
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
