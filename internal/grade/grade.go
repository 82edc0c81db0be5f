// Package grade is the body of labctl grade: it grades a folder of student
// submissions with the kit's pristine suites and writes each student's
// feedback and the class's gradebook. labctl parses the flags into Options
// and prints the Result.
package grade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/intake"
	"github.com/fourth-outcome/labkit/internal/usage"
	"github.com/fourth-outcome/labkit/lateness"
	"github.com/fourth-outcome/labkit/site"
	"github.com/fourth-outcome/labkit/workpool"
)

// Options are labctl grade's flags and arguments, as given: Run checks
// them, in the order labctl always has, and says what is wrong with one as
// a usage error (*usage.Error).
type Options struct {
	// Root is the kit checkout that grades.
	Root string
	// Class is the folder of submissions.
	Class string
	// Labs names the labs graded (see parseLabs): "" or "all", "3",
	// "1-4", "1,3", names, or "present" (those the submissions changed).
	Labs string
	// Out is the folder of the feedback and the gradebook.
	Out string
	// Race decides whether the suites run with the race detector. It is
	// the caller's, so that its note about a missing detector is said once
	// per run.
	Race func() (bool, error)
	// Sandbox is where test binaries run: auto, bwrap or off.
	Sandbox string
	// Timeout is the time limit per submission and lab, every rerun
	// included; CaseTimeout each case's budget of real time
	// (grader.Options.CaseTimeout).
	Timeout, CaseTimeout time.Duration
	// Jobs is how many submissions are graded at once (0: one per CPU).
	Jobs int
	// Redis, when set, is the real server Redis-backed labs run against;
	// CheckRedis checks it and returns the environment entry that points
	// the suites at it.
	Redis      string
	CheckRedis func(ctx context.Context, addr string) (string, error)
	// Seed, when set, is the seed of every suite.
	Seed string
	// Force regrades every submission, even those graded before with the
	// same inputs.
	Force bool
	// DocsURL, when set, is where the course site is hosted; feedback
	// links there instead of Out/docs/.
	DocsURL string
	// Weights are the per-lab weights in the total, e.g. 1=1,2=2.
	Weights string
	// Memory and Disk are each run's limits, in MiB.
	Memory, Disk int
	// RunAs is the user test binaries run as without bwrap.
	RunAs string
	// Format, when set, names the format the class's one submission's
	// result is printed in: the class must hold one submission, and its
	// feedback links the course pages by their path in the kit.
	Format string
	// Students, when set, grades only these (names, IDs, entries or
	// folders, comma-separated), keeping everyone else's outputs in Out.
	Students string
	// Prune drops from Out the students no longer in Class.
	Prune bool
	// Shard is I/N: grade share I of N of the class.
	Shard string
	// KitVersion, when set, refuses to grade with another kit.
	KitVersion string
	// Release is the kit version a release names, "" in a checkout; it
	// stands for the kit's commit.
	Release string
	// Deadline, LatePerDay, LateCap and Extensions are the late-work
	// policy (see latePolicy).
	Deadline            string
	LatePerDay, LateCap float64
	Extensions          string
	// Submitted, when set, is the LMS's CSV of submission times.
	Submitted string
	// Log receives the notes and the progress lines.
	Log io.Writer
}

// Result is what a grading did.
type Result struct {
	// Students are the submissions graded now, as written to Out (with
	// the labs of their last grading carried over).
	Students []gradebook.Student
	// Class are the class-wide settings the outputs were written with.
	Class gradebook.Options
	// Labs is how many labs were graded.
	Labs int
	// Reused counts the runs whose report was reused from the last
	// grading.
	Reused int
	// NotGraded counts the submissions that could not be graded.
	NotGraded int
	// Elapsed is how long the grading took.
	Elapsed time.Duration
}

// cacheEntry is what a rerun needs to skip a submission-lab: the key of
// its inputs and the report they gave.
type cacheEntry struct {
	Key    string         `json:"key"`
	Report *grader.Report `json:"report"`
}

// Run grades the submissions of o.Class into o.Out. Bad options are a
// usage error (*usage.Error); submissions that cannot be graded are not
// an error but counted in Result.NotGraded.
// settings are Options checked and resolved.
type settings struct {
	labs           []course.Lab
	weights        map[int]float64
	race           bool
	sandbox        grader.Sandbox
	out            string // Options.Out, absolute
	prev           gradebook.ClassFile
	hadPrev        bool
	late           lateness.Policy
	shardI, shardN int
	env            []string
	runAs          string
	jobs           int
}

// settings checks o, in the order labctl always has, and resolves it: a
// bad option is a usage error.
func (o Options) settings(ctx context.Context) (settings, error) {
	var st settings
	var err error
	if st.labs, err = parseLabs(o.Labs); err != nil {
		return st, err
	}
	if st.weights, err = parseWeights(o.Weights); err != nil {
		return st, err
	}
	if fi, err := os.Stat(o.Class); err != nil || !fi.IsDir() {
		return st, usage.Errorf("grade: %s is not a folder of submissions (want LAB SUBMISSIONS_DIR, or SUBMISSIONS_DIR with --labs)", o.Class)
	}
	if st.race, err = o.Race(); err != nil {
		return st, err
	}
	sandbox, note, err := grader.ResolveSandbox(o.Sandbox)
	if err != nil {
		return st, usage.Errorf("grade: --sandbox: %v", err)
	}
	st.sandbox = sandbox
	if note != "" {
		fmt.Fprintln(o.Log, note)
	}
	if o.Seed != "" {
		if _, err := strconv.ParseUint(o.Seed, 10, 64); err != nil {
			return st, usage.Errorf("grade: --seed %q: want an integer", o.Seed)
		}
	}
	if st.out, err = filepath.Abs(o.Out); err != nil {
		return st, usage.Errorf("grade: --out: %v", err)
	}
	if err := os.MkdirAll(st.out, 0o755); err != nil {
		return st, usage.Errorf("grade: --out: %v", err)
	}
	if st.prev, st.hadPrev, err = gradebook.ReadClassFile(st.out); err != nil {
		return st, usage.Errorf("grade: --out: %v", err)
	}
	if st.late, err = o.latePolicy(st.prev.Late); err != nil {
		return st, err
	}
	if st.shardI, st.shardN, err = parseShard(o.Shard); err != nil {
		return st, err
	}
	if o.Redis != "" {
		entry, err := o.CheckRedis(ctx, o.Redis)
		if err != nil {
			return st, err
		}
		st.env = append(st.env, entry)
	}
	if o.Memory <= 0 {
		return st, usage.Errorf("grade: --memory %d: want a number of MiB above 0", o.Memory)
	}
	if o.Disk <= 0 {
		return st, usage.Errorf("grade: --disk %d: want a number of MiB above 0", o.Disk)
	}
	if st.runAs, err = grader.ResolveRunAs(o.RunAs, sandbox); err != nil {
		return st, usage.Errorf("grade: --run-as: %v", err)
	}
	st.jobs = o.Jobs
	if st.jobs <= 0 {
		st.jobs = max(1, runtime.NumCPU())
	}
	return st, nil
}

func Run(ctx context.Context, o Options) (Result, error) {
	root, labSpec, class := o.Root, o.Labs, o.Class
	set, err := o.settings(ctx)
	if err != nil {
		return Result{}, err
	}
	labs, weights, out := set.labs, set.weights, set.out
	prevClass, hadPrev, late := set.prev, set.hadPrev, set.late

	kit, err := grader.NewKit(root, "")
	if err != nil {
		return Result{}, err
	}
	defer kit.Close()
	if v := o.Release; v != "" {
		// A release (the Gradescope autograder's among them) names its
		// kit version: its folder is no git checkout, or another one's.
		kit.Commit = v
	}
	if v := o.KitVersion; v != "" && kit.Commit != v && (len(v) < 7 || !strings.HasPrefix(kit.Commit, v)) {
		return Result{}, usage.Errorf("grade: --kit-version %s: this kit is %s; check that version out (git checkout %s) or drop the flag", v, kit.Commit, v)
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
		return Result{}, usage.Errorf("grade: %v", err)
	}
	keepLabs(subs, intakeLabs)
	if len(subs) == 0 {
		return Result{}, usage.Errorf("grade: %s has no submissions (want one folder, .zip or .tar.gz per student)", class)
	}
	inClass := map[string]bool{}
	for _, sub := range subs {
		inClass[gradebook.Dir(sub.Student)] = true
	}
	if subs, err = selectSubmissions(subs, o.Students, set.shardI, set.shardN); err != nil {
		return Result{}, err
	}
	if o.Submitted != "" {
		if err := submittedFromLMS(o.Submitted, subs); err != nil {
			return Result{}, err
		}
	}
	if o.Format != "" && len(subs) != 1 {
		return Result{}, usage.Errorf("grade: --format %s grades one submission; %s has %d", o.Format, class, len(subs))
	}
	if labSpec == "present" {
		labs = presentLabs(root, labs, subs)
		glabs = nil
		for _, l := range labs {
			glabs = append(glabs, l.Lab)
		}
	}

	docsBase := o.DocsURL
	if docsBase != "" && !strings.HasSuffix(docsBase, "/") {
		docsBase += "/"
	}
	// With Format, the feedback is read on the platform, where no
	// rendered site sits beside it: it links the course pages by their
	// path in the student's copy of the kit instead (or at DocsURL).
	if docsBase == "" && o.Format == "" {
		if _, err := site.Build(site.Config{Root: root, Out: filepath.Join(out, "docs")}); err != nil {
			fmt.Fprintf(o.Log, "warning: the course pages could not be built into %s: %v; feedback links will not resolve\n", filepath.Join(out, "docs"), err)
		} else {
			docsBase = "../docs/"
		}
	}
	gopts := gradebook.Options{Labs: glabs, Weights: weights, DocsBase: docsBase, Kit: kit.Commit, Scrub: []string{root, kit.Scratch, out}, Late: late}
	if o.Weights == "" && hadPrev {
		gopts.Weights = prevClass.Weights
	}
	var courseLabs []grader.Lab
	for _, l := range course.Built() {
		courseLabs = append(courseLabs, l.Lab)
	}
	if hadPrev && !o.Prune && o.Format == "" {
		if prev, err := prevClass.Options(courseLabs); err == nil {
			gopts.Labs = gradebook.UnionLabs(glabs, prev.Labs)
		}
	}
	old, err := gradebook.LoadStudents(out, courseLabs)
	if err != nil {
		return Result{}, usage.Errorf("grade: --out: %v", err)
	}
	oldByDir := map[string]gradebook.Student{}
	for _, st := range old {
		oldByDir[gradebook.Dir(st.Name)] = st
	}

	students := make([]gradebook.Student, len(subs))
	var todo []run
	for i, sub := range subs {
		st := gradebook.Student{Name: sub.Student, Notes: sub.Notes, Err: sub.Err, Entry: sub.Entry, ID: sub.ID, Submitted: sub.Submitted,
			Prints: fingerprints(root, labs, sub)}
		if sub.Err == nil {
			st.Labs = make([]gradebook.Result, len(labs))
			for j, l := range labs {
				st.Labs[j] = gradebook.Result{Student: sub.Student, Lab: l.Lab}
				if _, ok := sub.Labs[l.Number]; ok {
					todo = append(todo, run{i, j})
				} else {
					st.Labs[j].Missing = true
				}
			}
		}
		students[i] = st
	}
	reused, start := o.gradeRuns(ctx, set, kit, subs, labs, students, todo)
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	notGraded := 0
	for _, st := range students {
		if !st.Graded() {
			notGraded++
		}
	}
	if err := write(out, students, oldByDir, inClass, gopts, o.Prune); err != nil {
		return Result{}, err
	}
	return Result{Students: students, Class: gopts, Labs: len(labs), Reused: reused, NotGraded: notGraded, Elapsed: time.Since(start)}, nil
}

// run is one lab of one submission to grade: its index in the
// submissions and in the labs.
type run struct{ s, l int }

// gradeRuns grades the runs todo into students' results, reusing the
// report of an earlier grading with the same inputs (in Out/.cache) unless
// o.Force, and says how it goes on o.Log. It returns how many runs were
// reused and when the first began; when ctx is done it stops early.
func (o Options) gradeRuns(ctx context.Context, set settings, kit *grader.Kit, subs []intake.Submission, labs []course.Lab, students []gradebook.Student, todo []run) (reused int, start time.Time) {
	root, out, race, sandbox, runAs, jobs, extraEnv := o.Root, set.out, set.race, set.sandbox, set.runAs, set.jobs, set.env
	flagsKey := fmt.Sprintf("race=%v timeout=%s case-timeout=%s seed=%s sandbox=%s redis=%v memory=%d disk=%d run-as=%s", race, o.Timeout, o.CaseTimeout, o.Seed, sandbox, o.Redis != "", o.Memory, o.Disk, runAs)
	sandboxWord := string(sandbox)
	if runAs != "" {
		sandboxWord += " (as " + runAs + ")"
	}
	fmt.Fprintf(o.Log, "grading %d submissions over %d lab(s) (%d runs), %d at a time, sandbox %s, kit %s\n", len(subs), len(labs), len(todo), jobs, sandboxWord, kit.Commit)

	var (
		mu       sync.Mutex
		done     int
		failures int
		ran      time.Duration
	)
	start = time.Now()
	_ = workpool.Each(ctx, jobs, len(todo), func(k int) {
		jb := todo[k]
		sub, lab := subs[jb.s], labs[jb.l]
		r := &students[jb.s].Labs[jb.l]
		dir := sub.Labs[lab.Number]
		key, keyErr := inputKey(kit.Content+" "+kit.Commit, flagsKey, lab.Dir, dir)
		cachePath := filepath.Join(out, ".cache", gradebook.Dir(sub.Student), lab.Dir+".json")
		cached := false
		if keyErr == nil && !o.Force {
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
				Race: race, Timeout: o.Timeout, CaseTimeout: o.CaseTimeout, Env: extraEnv, Seed: o.Seed, Kit: kit, Sandbox: sandbox,
				Limits: grader.Limits{Memory: int64(o.Memory) << 20, Disk: int64(o.Disk) << 20}, RunAs: runAs})
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
		fmt.Fprintf(o.Log, "[%d/%d] %d not passing so far%s · %s lab %02d: %s%s\n", done, len(todo), failures, left, sub.Student, lab.Number, r.Verdict(), map[bool]string{true: " (unchanged, not regraded)"}[cached])
	})
	return reused, start
}

// write writes the feedback of students into out, each with the labs of
// their last grading (old, by folder) carried over, removes the folders
// of earlier runs that belong to no student (and with prune those of
// students no longer in the class), and writes the class files.
func write(out string, students []gradebook.Student, oldByDir map[string]gradebook.Student, inClass map[string]bool, gopts gradebook.Options, prune bool) error {
	keep := map[string]bool{"docs": true, ".cache": true}
	for dir := range oldByDir {
		// A partial regrade keeps everyone else; prune drops those no
		// longer in the class folder.
		keep[dir] = !prune || inClass[dir]
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
		students[i] = st
	}
	removeStale(out, keep)
	if err := WriteClassFiles(out, gopts); err != nil {
		return fmt.Errorf("grade: write gradebook: %w", err)
	}
	return nil
}

// inputKey is the hash of everything a grade depends on: the scratch kit's
// content, the flags, the lab, and the submission's lab files.
func inputKey(kitContent, flagsKey, lab, dir string) (string, error) {
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
