package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/formats"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/intake"
	"github.com/fourth-outcome/labkit/site"
	"github.com/fourth-outcome/labkit/workpool"
)

type gradeOpts struct {
	out     string
	labs    string
	race    string
	timeout time.Duration
	// caseTimeout is each case's budget of real time (grader.Options.CaseTimeout).
	caseTimeout time.Duration
	jobs        int
	redis       string
	sandbox     string
	seed        string
	force       bool
	docsURL     string
	weights     string
	memory      int
	// format names the format (formats.Lookup) the class's one
	// submission's result is printed in (see runGradeFormat).
	format string
	// report, when set, receives the graded class before runGrade
	// returns; the --format output is made from it.
	report func(students []gradebook.Student, o gradebook.Options) error
	disk   int
	runAs  string

	// students, when set, grades only these (by name, ID, entry or
	// folder), keeping everyone else's outputs in --out.
	students string
	prune    bool
	shard    string
	// kitVersion, when set, refuses to grade with another kit.
	kitVersion string
	deadline   string
	perDay     float64
	lateCap    float64
	extensions string
	submitted  string
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
		fs.StringVar(&o.out, "out", "graded", "directory for the feedback and the gradebook")
		fs.StringVar(&o.labs, "labs", "", "labs to grade: all (default), 3, 1-4, 1,3, or present (those the submissions changed)")
		fs.StringVar(&o.race, "race", "auto", "race detector: auto, on, off")
		fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "time limit per submission and lab, every rerun included")
		fs.DurationVar(&o.caseTimeout, "case-timeout", grader.DefaultCaseTimeout, "real time one case may run: a case still running then is stopped, reported as a timeout with where the code was, and the cases after it run again in a fresh process")
		fs.IntVar(&o.jobs, "jobs", 0, "submissions graded at once (0: one per CPU)")
		fs.IntVar(&o.jobs, "parallel", 0, "alias of --jobs")
		fs.StringVar(&o.redis, "redis", "", "run Redis-backed labs against this real server (host:port)")
		fs.StringVar(&o.sandbox, "sandbox", "auto", "where test binaries run: auto (bwrap when it works), bwrap, off")
		fs.StringVar(&o.seed, "seed", "", "seed for every suite (default: each case's fixed seed)")
		fs.BoolVar(&o.force, "force", false, "regrade every submission, even those graded before with the same inputs")
		fs.StringVar(&o.docsURL, "docs-url", "", "where the course site is hosted; feedback links there instead of OUT/docs/")
		fs.IntVar(&o.memory, "memory", 2048, "resident memory each run may use, in MiB")
		fs.IntVar(&o.disk, "disk", grader.DefaultDisk>>20, "what each run may write (its directory and /tmp), in MiB")
		fs.StringVar(&o.runAs, "run-as", "", "user test binaries run as without bwrap (the grader must be root; default nobody when it is)")
		fs.StringVar(&o.weights, "weights", "", "per-lab weights in the total, e.g. 1=1,2=2 (default 1 each)")
		fs.StringVar(&o.format, "format", "", "print the one submission's result in this format: "+strings.Join(formats.Names(), ", "))
		fs.StringVar(&o.students, "student", "", "regrade only these students (names, LMS IDs, entries or folders, comma-separated); everyone else's outputs in --out are kept")
		fs.BoolVar(&o.prune, "prune", false, "drop from --out the students who are no longer in SUBMISSIONS_DIR")
		fs.StringVar(&o.shard, "shard", "", "grade share I of N of the class (I/N, e.g. 2/4); join the shards' --out folders with labctl gradebook merge")
		fs.StringVar(&o.kitVersion, "kit-version", "", "refuse to grade unless the kit is this version (a commit or its prefix, or a release's version)")
		fs.StringVar(&o.deadline, "deadline", "", "the deadline, e.g. 2026-03-01T23:59:00Z (default: none, nothing is late)")
		fs.Float64Var(&o.perDay, "late-per-day", 10, "percent of the total taken off per day begun after the deadline")
		fs.Float64Var(&o.lateCap, "late-cap", 50, "most percent taken off for lateness")
		fs.StringVar(&o.extensions, "extensions", "", "file of per-student extensions, a STUDENT,DURATION line each (48h, 2d)")
		fs.StringVar(&o.submitted, "submitted", "", "CSV of submission times exported from the LMS (default: the time in a Blackboard name, else each entry's modification time)")
		return func(ctx context.Context, e *env, args []string) error { return runGrade(ctx, e, o, args) }
	},
}

// parseLabs turns --labs into labs of the course: "" or "all", "3",
// "1-4", "1,3", names such as "retry" or "04-retry"; "present" is every lab until the submissions are read
// (see presentLabs).
func parseLabs(spec string) ([]course.Lab, error) {
	if spec == "" || spec == "all" || spec == "present" {
		return course.Built(), nil
	}
	seen := map[int]bool{}
	var out []course.Lab
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		names := []string{lo}
		if _, err := course.Find(part); err == nil {
			names, isRange = []string{part}, false // a lab's name: 04-retry
		}
		if isRange {
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a > b {
				return nil, usagef("--labs %q: want a list like 1-4 or 1,3", spec)
			}
			names = nil
			for n := a; n <= b; n++ {
				names = append(names, strconv.Itoa(n))
			}
		}
		for _, n := range names {
			l, err := course.Find(n)
			if err != nil {
				return nil, usagef("--labs: %v", err)
			}
			if !seen[l.Number] {
				seen[l.Number] = true
				out = append(out, l)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

func parseWeights(spec string) (map[int]float64, error) {
	w := map[int]float64{}
	if spec == "" {
		return w, nil
	}
	for _, part := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(part, "=")
		n, err1 := strconv.Atoi(strings.TrimSpace(k))
		f, err2 := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err1 != nil || err2 != nil || f < 0 {
			return nil, usagef("--weights %q: want LAB=WEIGHT pairs, e.g. 1=1,2=2", spec)
		}
		w[n] = f
	}
	return w, nil
}

// cacheEntry is what a rerun needs to skip a submission-lab: the key of
// its inputs and the report they gave.
type cacheEntry struct {
	Key    string         `json:"key"`
	Report *grader.Report `json:"report"`
}

func runGrade(ctx context.Context, e *env, o *gradeOpts, args []string) error {
	if o.format != "" && o.report == nil {
		return runGradeFormat(ctx, e, o, args)
	}
	var labSpec, class string
	switch len(args) {
	case 1:
		labSpec, class = o.labs, args[0]
	case 2:
		if o.labs != "" {
			return usagef("grade: give either LAB or --labs, not both")
		}
		labSpec, class = args[0], args[1]
	default:
		return usagef("grade: want [LAB] SUBMISSIONS_DIR, e.g. %s grade --labs 1-4 ./submissions", e.prog())
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	labs, err := parseLabs(labSpec)
	if err != nil {
		return err
	}
	weights, err := parseWeights(o.weights)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(class); err != nil || !fi.IsDir() {
		return usagef("grade: %s is not a folder of submissions (want LAB SUBMISSIONS_DIR, or SUBMISSIONS_DIR with --labs)", class)
	}
	race, err := e.raceMode(o.race)
	if err != nil {
		return err
	}
	sandbox, note, err := grader.ResolveSandbox(o.sandbox)
	if err != nil {
		return usagef("grade: --sandbox: %v", err)
	}
	if note != "" {
		fmt.Fprintln(e.stderr, note)
	}
	if o.seed != "" {
		if _, err := strconv.ParseUint(o.seed, 10, 64); err != nil {
			return usagef("grade: --seed %q: want an integer", o.seed)
		}
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return usagef("grade: --out: %v", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return usagef("grade: --out: %v", err)
	}
	prevClass, hadPrev, err := gradebook.ReadClassFile(out)
	if err != nil {
		return usagef("grade: --out: %v", err)
	}
	late, err := o.latePolicy(prevClass.Late)
	if err != nil {
		return err
	}
	shardI, shardN, err := parseShard(o.shard)
	if err != nil {
		return err
	}
	var extraEnv []string
	if o.redis != "" {
		entry, err := checkRedis(ctx, o.redis)
		if err != nil {
			return err
		}
		extraEnv = append(extraEnv, entry)
	}
	if o.memory <= 0 {
		return usagef("grade: --memory %d: want a number of MiB above 0", o.memory)
	}
	if o.disk <= 0 {
		return usagef("grade: --disk %d: want a number of MiB above 0", o.disk)
	}
	runAs, err := grader.ResolveRunAs(o.runAs, sandbox)
	if err != nil {
		return usagef("grade: --run-as: %v", err)
	}
	jobs := o.jobs
	if jobs <= 0 {
		jobs = max(1, runtime.NumCPU())
	}

	kit, err := grader.NewKit(root, "")
	if err != nil {
		return err
	}
	defer kit.Close()
	if v := releaseVersion(root); v != "" {
		// A release (the Gradescope autograder's among them) names its
		// kit version: its folder is no git checkout, or another one's.
		kit.Commit = v
	}
	if v := o.kitVersion; v != "" && kit.Commit != v && (len(v) < 7 || !strings.HasPrefix(kit.Commit, v)) {
		return usagef("grade: --kit-version %s: this kit is %s; check that version out (git checkout %s) or drop the flag", v, kit.Commit, v)
	}
	var intakeLabs []intake.Lab
	var glabs []grader.Lab
	for _, l := range labs {
		intakeLabs = append(intakeLabs, intake.Lab{Number: l.Number, Dir: l.Dir, Package: l.Package()})
		glabs = append(glabs, l.Lab)
	}
	// Intake looks for every lab of the course, so that lab 05's files in
	// 01-claim/ are named as such; then only the labs graded are kept.
	var courseIntake []intake.Lab
	for _, l := range course.Built() {
		courseIntake = append(courseIntake, intake.Lab{Number: l.Number, Dir: l.Dir, Package: l.Package()})
	}
	subs, err := intake.Read(class, courseIntake, filepath.Join(kit.Scratch, "intake"), intake.Limits{}, out)
	if err != nil {
		return usagef("grade: %v", err)
	}
	keepLabs(subs, intakeLabs)
	if len(subs) == 0 {
		return usagef("grade: %s has no submissions (want one folder, .zip or .tar.gz per student)", class)
	}
	inClass := map[string]bool{}
	for _, sub := range subs {
		inClass[gradebook.Dir(sub.Student)] = true
	}
	if subs, err = selectSubmissions(subs, o.students, shardI, shardN); err != nil {
		return err
	}
	if o.submitted != "" {
		if err := submittedFromLMS(o.submitted, subs); err != nil {
			return err
		}
	}
	if o.format != "" && len(subs) != 1 {
		return usagef("grade: --format %s grades one submission; %s has %d", o.format, class, len(subs))
	}
	if labSpec == "present" {
		labs = presentLabs(root, labs, subs)
		glabs = nil
		for _, l := range labs {
			glabs = append(glabs, l.Lab)
		}
	}

	docsBase := o.docsURL
	if docsBase != "" && !strings.HasSuffix(docsBase, "/") {
		docsBase += "/"
	}
	// With --format, the feedback is read on the platform, where no
	// rendered site sits beside it: it links the course pages by their
	// path in the student's copy of the kit instead (or at --docs-url).
	if docsBase == "" && o.format == "" {
		if _, err := site.Build(site.Config{Root: root, Out: filepath.Join(out, "docs")}); err != nil {
			fmt.Fprintf(e.stderr, "warning: the course pages could not be built into %s: %v; feedback links will not resolve\n", filepath.Join(out, "docs"), err)
		} else {
			docsBase = "../docs/"
		}
	}
	gopts := gradebook.Options{Labs: glabs, Weights: weights, DocsBase: docsBase, Kit: kit.Commit, Scrub: []string{root, kit.Scratch, out}, Late: late}
	if o.weights == "" && hadPrev {
		gopts.Weights = prevClass.Weights
	}
	var courseLabs []grader.Lab
	for _, l := range course.Built() {
		courseLabs = append(courseLabs, l.Lab)
	}
	if hadPrev && !o.prune && o.format == "" {
		if prev, err := prevClass.Options(courseLabs); err == nil {
			gopts.Labs = gradebook.UnionLabs(glabs, prev.Labs)
		}
	}
	old, err := gradebook.LoadStudents(out, courseLabs)
	if err != nil {
		return usagef("grade: --out: %v", err)
	}
	oldByDir := map[string]gradebook.Student{}
	for _, st := range old {
		oldByDir[gradebook.Dir(st.Name)] = st
	}

	students := make([]gradebook.Student, len(subs))
	type job struct{ s, l int }
	var todo []job
	for i, sub := range subs {
		st := gradebook.Student{Name: sub.Student, Notes: sub.Notes, Err: sub.Err, Entry: sub.Entry, ID: sub.ID, Submitted: sub.Submitted,
			Prints: fingerprints(root, labs, sub)}
		if sub.Err == nil {
			st.Labs = make([]gradebook.Result, len(labs))
			for j, l := range labs {
				st.Labs[j] = gradebook.Result{Student: sub.Student, Lab: l.Lab}
				if _, ok := sub.Labs[l.Number]; ok {
					todo = append(todo, job{i, j})
				} else {
					st.Labs[j].Missing = true
				}
			}
		}
		students[i] = st
	}
	flagsKey := fmt.Sprintf("race=%v timeout=%s case-timeout=%s seed=%s sandbox=%s redis=%v memory=%d disk=%d run-as=%s", race, o.timeout, o.caseTimeout, o.seed, sandbox, o.redis != "", o.memory, o.disk, runAs)
	sandboxWord := string(sandbox)
	if runAs != "" {
		sandboxWord += " (as " + runAs + ")"
	}
	fmt.Fprintf(e.stderr, "grading %d submissions over %d lab(s) (%d runs), %d at a time, sandbox %s, kit %s\n", len(subs), len(labs), len(todo), jobs, sandboxWord, kit.Commit)

	var (
		mu       sync.Mutex
		done     int
		failures int
		reused   int
		ran      time.Duration
	)
	start := time.Now()
	_ = workpool.Each(ctx, jobs, len(todo), func(k int) {
		jb := todo[k]
		sub, lab := subs[jb.s], labs[jb.l]
		r := &students[jb.s].Labs[jb.l]
		dir := sub.Labs[lab.Number]
		key, keyErr := gradeInputKey(kit.Content+" "+kit.Commit, flagsKey, lab.Dir, dir)
		cachePath := filepath.Join(out, ".cache", gradebook.Dir(sub.Student), lab.Dir+".json")
		cached := false
		if keyErr == nil && !o.force {
			if data, err := os.ReadFile(cachePath); err == nil {
				var ce cacheEntry
				if json.Unmarshal(data, &ce) == nil && ce.Key == key && ce.Report != nil {
					r.Report, cached = ce.Report, true
				}
			}
		}
		t0 := time.Now()
		if !cached {
			r.Report, r.Err = grader.RunGoTest(ctx, grader.Options{Root: root, Lab: lab.Lab, Impl: dir, Target: sub.Student,
				Race: race, Timeout: o.timeout, CaseTimeout: o.caseTimeout, Env: extraEnv, Seed: o.seed, Kit: kit, Sandbox: sandbox,
				Limits: grader.Limits{Memory: int64(o.memory) << 20, Disk: int64(o.disk) << 20}, RunAs: runAs})
			if r.Err == nil && keyErr == nil && ctx.Err() == nil {
				data, _ := json.Marshal(cacheEntry{Key: key, Report: r.Report})
				_ = os.MkdirAll(filepath.Dir(cachePath), 0o755)
				_ = os.WriteFile(cachePath, data, 0o644)
			}
		}
		if ctx.Err() != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		done++
		if cached {
			reused++
		} else {
			ran += time.Since(t0)
		}
		if r.Err != nil || r.Report == nil || !r.Report.Passed {
			failures++
		}
		left := ""
		if n := done - reused; n > 0 {
			perRun := ran / time.Duration(n) / time.Duration(jobs)
			left = fmt.Sprintf(", about %s left", (perRun * time.Duration(len(todo)-done)).Round(time.Second))
		}
		fmt.Fprintf(e.stderr, "[%d/%d] %d not passing so far%s · %s lab %02d: %s%s\n", done, len(todo), failures, left, sub.Student, lab.Number, r.Verdict(), map[bool]string{true: " (unchanged, not regraded)"}[cached])
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	keep := map[string]bool{"docs": true, ".cache": true}
	for dir := range oldByDir {
		// A partial regrade keeps everyone else; --prune drops those no
		// longer in the class folder.
		keep[dir] = !o.prune || inClass[dir]
	}
	for i, st := range students {
		if prev, ok := oldByDir[gradebook.Dir(st.Name)]; ok {
			st = carryLabs(st, prev, gopts.Labs)
			st.Previous = gradebook.PreviousOf(prev, gopts)
		} else {
			st = carryLabs(st, gradebook.Student{}, gopts.Labs)
		}
		if err := gradebook.WriteStudent(out, st, gopts); err != nil {
			return fmt.Errorf("grade: write feedback of %s: %w", st.Name, err)
		}
		keep[gradebook.Dir(st.Name)] = true
		if o.format != "" {
			students[i] = st
		}
	}
	removeStale(out, keep)
	if err := writeClassFiles(out, gopts, courseLabs); err != nil {
		return fmt.Errorf("grade: write gradebook: %w", err)
	}
	if o.report != nil {
		if err := o.report(students, gopts); err != nil {
			return err
		}
	}

	notGraded := 0
	for _, st := range students {
		if !st.Graded() {
			notGraded++
		}
	}
	fmt.Fprintf(e.stdout, "graded %d of %d submissions over %d lab(s) in %s (%d runs reused from the last grading): feedback in %s/<folder>/, gradebook in %s\n",
		len(students)-notGraded, len(students), len(labs), time.Since(start).Round(time.Second), reused, o.out, filepath.Join(o.out, "gradebook.csv"))
	if notGraded > 0 {
		fmt.Fprintf(e.stderr, "%d submission(s) could not be graded (see the status column of gradebook.csv)\n", notGraded)
		return errFailed
	}
	return nil
}

// gradeInputKey is the hash of everything a grade depends on: the scratch kit's
// content, the flags, the lab, and the submission's lab files.
func gradeInputKey(kitContent, flagsKey, lab, dir string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "kit %s\nflags %s\nlab %s\n", kitContent, flagsKey, lab)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, en := range entries {
		name := en.Name()
		if !en.Type().IsRegular() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// removeStale deletes student folders of earlier runs from out: folders
// holding a feedback.md that belong to no current submission.
func removeStale(out string, keep map[string]bool) {
	entries, err := os.ReadDir(out)
	if err != nil {
		return
	}
	for _, en := range entries {
		if !en.IsDir() || keep[en.Name()] {
			continue
		}
		dir := filepath.Join(out, en.Name())
		if _, err := os.Stat(filepath.Join(dir, "feedback.md")); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		os.RemoveAll(dir)
		os.RemoveAll(filepath.Join(out, ".cache", en.Name()))
	}
}
