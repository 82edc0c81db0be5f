package grader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/diagnosis"
	"github.com/fourth-outcome/labkit/feedback"
	"github.com/fourth-outcome/labkit/rubric"
	"github.com/fourth-outcome/labkit/workpool"
)

// Check is one verification: a starter, a solution or a mistake, and whether
// it behaved as the kit promises.
type Check struct {
	Lab    Lab
	Kind   string // "starter", "solution", "mistake"
	Name   string // the mistake's name
	OK     bool
	Detail string // why it is (not) OK
	Report *Report
	m      *Mistake // the catalogue entry of a mistake check
}

// CatalogueEntry returns the catalogue entry of a mistake check.
func (c Check) CatalogueEntry() (Mistake, bool) { return c.mistake() }

func (c Check) mistake() (Mistake, bool) {
	if c.m == nil {
		return Mistake{}, false
	}
	return *c.m, true
}

// String is the check's one-line verdict.
func (c Check) String() string {
	mark := "ok  "
	if !c.OK {
		mark = "FAIL"
	}
	what := c.Kind
	if c.Name != "" {
		what += " " + c.Name
	}
	return fmt.Sprintf("%s %s %-40s %s", mark, c.Lab.Dir, what, c.Detail)
}

// VerifyOptions configures Verify.
type VerifyOptions struct {
	Root     string
	Race     bool
	Env      []string
	Parallel int       // concurrent go test runs; 0 means the number of CPUs
	Progress io.Writer // one line per finished check
	// Fixtures adds a check per independent test program of each suite
	// (Lab.Fixtures): a wrong program must fail, a correct one pass.
	Fixtures bool
	// Programs, when set, is a folder of programs written outside the kit,
	// by testers who never read its suites: Programs/<lab>/wrong/<name>/
	// must each be caught and Programs/<lab>/correct/<name>/ must each
	// pass, where <lab> is the lab's directory name ("01-claim") or its
	// two-digit number ("01"). Verify then runs these alone: no starter,
	// solution, mistake or fixture.
	Programs string
	// CaseTimeout is each case's budget of real time (Options.CaseTimeout).
	CaseTimeout time.Duration
	// TraceRules adds a "rules" check per lab: its README's numbered
	// rules, cases and mistakes must trace to each other (traceRules).
	TraceRules bool
}

// Verify proves the kit's promises for the given labs: each starter builds
// and fails for the right reason (its not-implemented error, not a compile
// error), each solution passes, and each catalogued mistake fails with its
// concept named in the feedback.
func Verify(ctx context.Context, labs []Lab, o VerifyOptions) ([]Check, error) {
	type job struct {
		check Check
		opts  Options
		m     Mistake
	}
	var jobs []job
	for _, lab := range labs {
		base := Options{Root: o.Root, Lab: lab, Race: o.Race, Env: o.Env, CaseTimeout: o.CaseTimeout}
		solution := filepath.Join(o.Root, "solutions", lab.Dir)
		// programs adds a check per program in dir/wrong and dir/correct. A
		// program holds only the files it changes; the rest are the
		// solution's, as for a catalogued mistake.
		program := func(kind, d string) {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				return
			}
			po := base
			po.Base = solution
			po.Impl = d
			po.Target = kind + " program " + filepath.Base(d)
			// A catalogue entry written from this very program is held
			// out of its diagnosis (Mistake.From).
			po.Lab.Signatures = diagnosis.HeldOut(lab.Signatures, filepath.Join(lab.Dir, kind, filepath.Base(d)))
			// A wrong fixture only has to be caught: any failing case
			// decides that, so its suite stops at the first. A measure
			// (Programs) runs every case, for the diagnosis.
			po.FailFast = kind == "wrong" && o.Programs == ""
			jobs = append(jobs, job{check: Check{Lab: lab, Kind: kind, Name: filepath.Base(d)}, opts: po})
		}
		programs := func(dir string) {
			for _, kind := range []string{"wrong", "correct"} {
				dirs, _ := filepath.Glob(filepath.Join(dir, kind, "*"))
				for _, d := range dirs {
					program(kind, d)
				}
			}
		}
		if o.Programs != "" {
			for _, name := range []string{lab.Dir, fmt.Sprintf("%02d", lab.Number)} {
				if fi, err := os.Stat(filepath.Join(o.Programs, name)); err == nil && fi.IsDir() {
					programs(filepath.Join(o.Programs, name))
				}
			}
			continue
		}
		// The pristine starter, not labs/, where a learner's work replaces it.
		pristine, err := os.MkdirTemp("", "labkit-starter-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(pristine)
		if err := WriteStarter(pristine, lab); err != nil {
			return nil, err
		}
		starter := base
		starter.Impl = pristine
		starter.Target = "starter labs/" + lab.Dir
		jobs = append(jobs, job{check: Check{Lab: lab, Kind: "starter"}, opts: starter})
		sol := base
		sol.Impl = solution
		sol.Target = "solution"
		jobs = append(jobs, job{check: Check{Lab: lab, Kind: "solution"}, opts: sol})
		mistakes, err := Mistakes(o.Root, lab)
		if err != nil {
			return nil, err
		}
		if len(mistakes) == 0 {
			jobs = append(jobs, job{check: Check{Lab: lab, Kind: "mistake", OK: false, Detail: "the lab has no catalogued mistakes"}})
		}
		for _, m := range mistakes {
			c := Check{Lab: lab, Kind: "mistake", Name: m.Name, m: &m}
			dir, err := m.Write(sol.Impl)
			if err != nil {
				// The solution changed under the patch: the mistake no
				// longer describes the code, and verify says so.
				c.Detail = err.Error()
				jobs = append(jobs, job{check: c})
				continue
			}
			mo := base
			mo.Base = sol.Impl
			mo.Impl = dir
			mo.Target = "mistake " + m.Name
			jobs = append(jobs, job{check: c, opts: mo, m: m})
		}
		if o.Fixtures && lab.Fixtures != "" {
			programs(filepath.Join(o.Root, filepath.FromSlash(lab.Fixtures)))
		}
		if o.Fixtures {
			// The blind testers' correct alternatives, and the wrong
			// programs a suite once missed (BlindRegressions), join the
			// fixtures; the rest of the blind set is the measure, run
			// with Programs.
			blind := filepath.Join(o.Root, filepath.FromSlash(BlindPrograms), lab.Dir)
			dirs, _ := filepath.Glob(filepath.Join(blind, "correct", "*"))
			for _, d := range dirs {
				program("correct", d)
			}
			regressions, err := blindRegressions(o.Root, lab)
			if err != nil {
				return nil, err
			}
			for _, d := range regressions {
				program("wrong", d)
			}
		}
	}
	par := o.Parallel
	if par <= 0 {
		par = runtime.NumCPU()
	}
	results := make([]Check, len(jobs))
	var mu sync.Mutex
	var firstErr error
	_ = workpool.Each(ctx, par, len(jobs), func(i int) {
		j := jobs[i]
		c := j.check
		if j.opts.Lab.Dir == "" { // a check decided without running anything
			results[i] = c
			if o.Progress != nil {
				mu.Lock()
				fmt.Fprintln(o.Progress, c)
				mu.Unlock()
			}
			return
		}
		rep, err := RunGoTest(ctx, j.opts)
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			c.Detail = err.Error()
		} else {
			c.Report = rep
			judge(&c, j.m)
		}
		results[i] = c
		if o.Progress != nil {
			mu.Lock()
			fmt.Fprintln(o.Progress, c)
			mu.Unlock()
		}
	})
	if firstErr != nil && ctx.Err() != nil {
		return results, ctx.Err()
	}
	if o.TraceRules {
		for _, lab := range labs {
			c := traceRules(o.Root, lab, results)
			results = append(results, c)
			if o.Progress != nil {
				fmt.Fprintln(o.Progress, c)
			}
		}
	}
	return results, nil
}

// traceRules is the lab's "rules" check: its README's numbered rules, its
// cases and its catalogued mistakes must trace to each other. Every rule has
// a case that checks it and a mistake whose failing cases include a case of
// that rule; no case or mistake names a rule the README does not have.
func traceRules(root string, lab Lab, checks []Check) Check {
	c := Check{Lab: lab, Kind: "rules"}
	readme, err := os.ReadFile(filepath.Join(root, "labs", lab.Dir, "README.md"))
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	rules, err := rubric.ParseRules(string(readme))
	if err != nil {
		c.Detail = fmt.Sprintf("labs/%s/README.md: %v", lab.Dir, err)
		return c
	}
	known := map[string]bool{}
	for _, r := range rules {
		known[r.ID] = true
	}
	var problems []string
	byCase := map[string][]string{} // case name -> rules
	checked := map[string]bool{}
	for _, cs := range lab.Cases {
		byCase[cs.Name] = cs.Rules
		if len(cs.Rules) == 0 {
			problems = append(problems, fmt.Sprintf("case %s names no rule", cs.Name))
		}
		for _, r := range cs.Rules {
			if !known[r] {
				problems = append(problems, fmt.Sprintf("case %s names %s, which the README does not have", cs.Name, r))
			}
			checked[r] = true
		}
	}
	caught := map[string]bool{}
	for _, ch := range checks {
		if ch.Lab.Dir != lab.Dir || ch.Kind != "mistake" {
			continue
		}
		m, ok := ch.mistake()
		if !ok {
			continue
		}
		if len(m.Rules) == 0 {
			problems = append(problems, fmt.Sprintf("mistake %s names no rule (add a \"Rules: R1\" line)", m.Name))
		}
		for _, r := range m.Rules {
			if !known[r] {
				problems = append(problems, fmt.Sprintf("mistake %s names %s, which the README does not have", m.Name, r))
			}
		}
		if ch.Report == nil {
			continue
		}
		for _, failed := range ch.Report.Failed() {
			for _, r := range byCase[failed.Name] {
				if slices.Contains(m.Rules, r) {
					caught[r] = true
				}
			}
		}
	}
	for _, r := range rules {
		if !checked[r.ID] {
			problems = append(problems, fmt.Sprintf("%s has no case", r.ID))
		}
		if !caught[r.ID] {
			problems = append(problems, fmt.Sprintf("%s has no catalogued mistake caught by a case of %s", r.ID, r.ID))
		}
	}
	if len(problems) > 0 {
		c.Detail = strings.Join(problems, "; ")
		return c
	}
	c.OK = true
	c.Detail = fmt.Sprintf("%d rules, each with a case and a mistake caught by it", len(rules))
	return c
}

func judge(c *Check, m Mistake) {
	rep := c.Report
	switch c.Kind {
	case "starter":
		switch {
		case rep.Build != nil:
			c.Detail = "does not compile: " + firstLine(rep.Build.Output)
		case rep.Passed:
			c.Detail = "passes the suite: the starter gives the answer away"
		case !mentions(rep, NotImplementedWords):
			c.Detail = fmt.Sprintf("fails (%d/%d) but no failure says \"not implemented\" or \"TODO\"", rep.Score(), rep.Total)
		default:
			c.OK = true
			c.Detail = fmt.Sprintf("fails for the right reason (%d/%d, not implemented)", rep.Score(), rep.Total)
		}
	case "solution":
		if rep.Passed {
			c.OK = true
			c.Detail = fmt.Sprintf("passes (%d/%d)", rep.Score(), rep.Total)
		} else {
			c.Detail = fmt.Sprintf("fails (%d/%d): %s", rep.Score(), rep.Total, failingNames(rep))
		}
	case "wrong":
		switch {
		case rep.Build != nil:
			c.Detail = "does not compile: " + firstLine(rep.Build.Output)
		case rep.Passed:
			c.Detail = "is NOT caught: the suite passes this wrong program"
		default:
			c.OK = true
			c.Detail = "caught by " + failingNames(rep)
		}
	case "correct":
		if rep.Passed {
			c.OK = true
			c.Detail = fmt.Sprintf("passes (%d/%d)", rep.Score(), rep.Total)
		} else {
			c.Detail = fmt.Sprintf("a correct program FAILS (%d/%d): %s", rep.Score(), rep.Total, failingNames(rep))
		}
	case "mistake":
		concepts := rep.FailedConcepts()
		concept := c.Lab.Concept(m.Concept)
		md := feedback.Markdown(rep, c.Lab, feedback.MarkdownOptions{})
		switch {
		case rep.Build != nil:
			c.Detail = "does not compile: " + firstLine(rep.Build.Output)
		case rep.Passed:
			c.Detail = "is NOT caught: the suite passes"
		case !slices.Contains(concepts, m.Concept):
			c.Detail = fmt.Sprintf("is caught, but by concepts %v, not its own %q", concepts, m.Concept)
		case !strings.Contains(md, concept.Misconception) && showsOwnConcept(rep, m.Concept):
			c.Detail = "is caught, but the feedback does not state the misconception"
		default:
			c.OK = true
			c.Detail = fmt.Sprintf("caught by %s (%s)", failingNames(rep), m.Concept)
		}
	}
}

// showsOwnConcept reports whether a case of the concept failed in a way
// whose feedback names a misconception: not only by hanging or crashing,
// which say where the code stopped rather than what it believes.
func showsOwnConcept(rep *Report, concept string) bool {
	for _, c := range rep.Failed() {
		if c.Concept == concept && ShowsMisconception(c.Status) {
			return true
		}
	}
	return false
}

func mentions(rep *Report, words []string) bool {
	for _, c := range rep.Failed() {
		text := strings.ToLower(strings.Join(c.Output, "\n"))
		for _, w := range words {
			if strings.Contains(text, w) {
				return true
			}
		}
	}
	return false
}

// failingNames lists the cases that failed, not those that never ran (a
// fail-fast run stops at its first failure).
func failingNames(rep *Report) string {
	var names []string
	for _, c := range rep.Failed() {
		if c.Status != StatusNotRun {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ", ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// BlindPrograms is the folder, relative to the kit's root, of the programs
// written by testers who never read the suites (see its README.md).
const BlindPrograms = "suites/testdata/blind"

// blindRegressions returns the folders of the lab's blind wrong programs
// that a suite once missed, as listed in BlindPrograms/REGRESSIONS (one
// "<lab dir>/wrong/<program>" per line; # starts a comment), so that
// Verify with Fixtures keeps them caught.
func blindRegressions(root string, lab Lab) ([]string, error) {
	list := filepath.Join(root, filepath.FromSlash(BlindPrograms), "REGRESSIONS")
	b, err := os.ReadFile(list)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("blind regressions: %w", err)
	}
	var dirs []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		labDir, rest, ok := strings.Cut(line, "/")
		if !ok || !strings.HasPrefix(rest, "wrong/") {
			return nil, fmt.Errorf("%s:%d: %q, want <lab dir>/wrong/<program>", list, i+1, line)
		}
		if labDir != lab.Dir {
			continue
		}
		d := filepath.Join(root, filepath.FromSlash(BlindPrograms), filepath.FromSlash(line))
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s:%d: no program %s", list, i+1, line)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}
