package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/diagnosis"
	"github.com/fourth-outcome/labkit/grader"
)

type verifyOpts struct {
	race     string
	parallel int
	redis    string
	rules    bool
	fixtures bool
	programs string
	// writeSignatures writes course/signatures from the mistakes' runs.
	writeSignatures bool
	// caseTimeout is the real time one case may run (grader.Options.CaseTimeout).
	caseTimeout time.Duration
}

var verifyCmd = &command{
	name:  "verify",
	usage: "[flags] [LAB...]",
	short: "prove the kit: starters fail, solutions pass, mistakes are caught",
	long: `
Verify is for authors and CI. For every lab (or the labs named) it runs the
pristine suite against:

  - the starter in labs/NN-name/: it must compile and fail with its
    "not implemented" error, never a compile error and never a pass;
  - the reference solution in solutions/NN-name/: it must pass;
  - every catalogued mistake in solutions/NN-name/mistakes/*.patch: it must fail,
    a failing case must carry the concept the mistake names, and the feedback
    must state that concept's misconception.

It also traces each lab's numbered rules (the "- **R1.**" items of its
README): every rule has a case and a catalogued mistake caught by a case of
that rule, and no case or mistake names a rule the README does not have.
With --fixtures it runs each suite's independent programs too: every one in
suites/<lab>suite/testdata/wrong/ must fail, every one in correct/ pass.

With --programs DIR it runs only the programs in DIR, written outside the
kit (DIR/NN-name/wrong/<program>/ must fail, DIR/NN-name/correct/<program>/
pass; NN alone names the lab too; a program holds the files it changes)
and prints, per lab, how many wrong programs the suite caught: the measure
of a suite by programs nobody wrote against it. It also says how many of
the caught ones got a diagnosis (a catalogued mistake whose failing cases
look like theirs) and, where DIR/NN-name/*LIST.md gives a program's rule
("name | what it does | R4"), how many diagnoses name a mistake of that
rule.

With --write-signatures it writes, for each lab run, what each catalogued
mistake fails to course/signatures/NN-name.json, from which check and grade
diagnose a failing run.

With --redis and no LAB, verify runs every lab whose suite uses Redis (the
course registry says which) against that server.

Verify never modifies labs/: it grades copies through go test -overlay. A
case still running after --case-timeout is stopped and counts as a timeout;
the cases after it run again in a fresh process.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &verifyOpts{}
		fs.StringVar(&o.race, "race", "auto", "race detector: auto, on, off")
		fs.IntVar(&o.parallel, "parallel", 0, "concurrent suite runs (0: one per CPU)")
		fs.StringVar(&o.redis, "redis", "", "run Redis-backed labs against this real server (host:port)")
		fs.BoolVar(&o.fixtures, "fixtures", false, "also run each suite's independent test programs (suites/<lab>suite/testdata/wrong/* must fail, correct/* must pass)")
		fs.StringVar(&o.programs, "programs", "", "run only the programs in this folder (DIR/NN-name/wrong/*, DIR/NN-name/correct/*) and tally them per lab")
		fs.DurationVar(&o.caseTimeout, "case-timeout", grader.DefaultCaseTimeout, "stop a case still running after this long (a hung case is a timeout; the cases after it run again in a fresh process)")
		fs.BoolVar(&o.writeSignatures, "write-signatures", false, "write course/signatures/NN-name.json, what each catalogued mistake fails, from this run (after adding a mistake or changing a suite)")
		fs.BoolVar(&o.rules, "rules", true, "trace each lab's numbered rules to its cases and mistakes (--rules=false to skip)")
		return func(ctx context.Context, e *env, args []string) error { return runVerify(ctx, e, o, args) }
	},
}

func runVerify(ctx context.Context, e *env, o *verifyOpts, args []string) error {
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	var labs []grader.Lab
	for _, l := range course.Built() {
		// With --redis and no labs named, verify the labs that use Redis:
		// the others never touch the server.
		if o.redis == "" || l.Redis {
			labs = append(labs, l.Lab)
		}
	}
	if len(args) > 0 {
		labs = nil
		for _, a := range args {
			l, err := resolveLab(a)
			if err != nil {
				return err
			}
			labs = append(labs, l)
		}
	}
	race, err := e.raceMode(o.race)
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
	if o.programs != "" {
		if fi, err := os.Stat(o.programs); err != nil || !fi.IsDir() {
			return usagef("--programs %s: not a folder", o.programs)
		}
		if abs, err := filepath.Abs(o.programs); err == nil {
			o.programs = abs
		}
	}
	start := time.Now()
	checks, err := grader.Verify(ctx, labs, grader.VerifyOptions{Root: root, Race: race, Env: extraEnv, Parallel: o.parallel, Progress: e.stdout,
		TraceRules: o.rules && o.programs == "", Fixtures: o.fixtures, Programs: o.programs, CaseTimeout: o.caseTimeout})
	if err != nil {
		return err
	}
	if o.programs != "" {
		if len(checks) == 0 {
			return usagef("--programs %s: no programs for these labs (want %s/NN-name/wrong/<program>/)", o.programs, o.programs)
		}
		fmt.Fprint(e.stdout, "\n"+programTally(checks))
		fmt.Fprint(e.stdout, "\n"+diagnosisTally(checks, o.programs))
	}
	if o.writeSignatures && o.programs == "" {
		if err := writeSignatures(root, labs, checks, e.stdout); err != nil {
			return err
		}
	}
	bad := 0
	for _, c := range checks {
		if !c.OK {
			bad++
		}
	}
	// How long the runs took is in the summary so that a CI log, which
	// keeps only its tail, says where the time went.
	took := time.Since(start).Round(time.Second)
	if bad > 0 {
		fmt.Fprintf(e.stdout, "\nverify: %d passed, %d failed (%s)\n", len(checks)-bad, bad, took)
		return errFailed
	}
	fmt.Fprintf(e.stdout, "\nverify: %d passed, 0 failed (%s)\n", len(checks), took)
	return nil
}

// programTally is a Markdown table of the programs verify ran, per lab:
// the wrong ones the suite caught and the correct ones it passed, and
// the names of those it got wrong.
func programTally(checks []grader.Check) string {
	type tally struct {
		wrong, caught, correct, passed int
		missed, failed                 []string
	}
	var order []string
	per := map[string]*tally{}
	for _, c := range checks {
		t := per[c.Lab.Dir]
		if t == nil {
			t = &tally{}
			per[c.Lab.Dir] = t
			order = append(order, c.Lab.Dir)
		}
		switch c.Kind {
		case "wrong":
			t.wrong++
			if c.OK {
				t.caught++
			} else {
				t.missed = append(t.missed, c.Name)
			}
		case "correct":
			t.correct++
			if c.OK {
				t.passed++
			} else {
				t.failed = append(t.failed, c.Name)
			}
		}
	}
	var b strings.Builder
	b.WriteString("| lab | wrong programs caught | correct programs passed | not caught | correct but failed |\n| --- | --- | --- | --- | --- |\n")
	for _, lab := range order {
		t := per[lab]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", lab, pct(t.caught, t.wrong), pct(t.passed, t.correct), strings.Join(t.missed, ", "), strings.Join(t.failed, ", "))
	}
	return b.String()
}

// pct is n of d, with the percentage: "17/19 (89%)".
func pct(n, d int) string {
	if d == 0 {
		return "0/0"
	}
	return fmt.Sprintf("%d/%d (%d%%)", n, d, n*100/d)
}

// writeSignatures writes course/signatures/DIR.json for each lab from its
// mistake checks: what each catalogued mistake fails, and how.
func writeSignatures(root string, labs []grader.Lab, checks []grader.Check, w io.Writer) error {
	for _, lab := range labs {
		var sigs []diagnosis.Signature
		for _, c := range checks {
			m, ok := c.CatalogueEntry()
			if c.Lab.Dir != lab.Dir || c.Kind != "mistake" || !ok || c.Report == nil {
				continue
			}
			sig := diagnosis.Signature{Mistake: m.Name, Concept: m.Concept, Rules: m.Rules, Summary: m.Summary, Failing: map[string]string{}, From: m.From}
			for _, cs := range c.Report.Cases {
				if diagnosis.Counts(string(cs.Status)) {
					sig.Failing[cs.Name] = string(cs.Status)
				}
			}
			sigs = append(sigs, sig)
		}
		if len(sigs) == 0 {
			continue
		}
		data, err := json.MarshalIndent(sigs, "", "  ")
		if err != nil {
			return err
		}
		path := filepath.Join(root, "course", "signatures", lab.Dir+".json")
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("write signatures: %w", err)
		}
		fmt.Fprintf(w, "wrote %s (%d mistakes)\n", filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator))), len(sigs))
	}
	return nil
}

// programRules reads the rules of the programs in dir's *LIST.md files,
// lines "name | what it does | R4" (a program's folder is the list's
// prefix, "t1-", and its name, which may carry the prefix already), by
// program folder. A list whose header names a "rule" column ("slug | rule
// | bug") gives the rules in that column.
func programRules(dir string) map[string][]string {
	out := map[string][]string{}
	lists, _ := filepath.Glob(filepath.Join(dir, "*LIST.md"))
	for _, l := range lists {
		prefix := strings.TrimSuffix(filepath.Base(l), "LIST.md")
		data, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		col := -1 // a header's "rule" column, else the last
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Split(line, "|")
			if len(f) < 3 {
				continue
			}
			for i, h := range f {
				if h := strings.TrimSpace(h); h == "rule" || h == "rules" {
					col = i
				}
			}
			name := strings.TrimPrefix(strings.TrimSpace(f[0]), prefix)
			rules := ruleRE.FindAllString(f[len(f)-1], -1)
			if col >= 0 && col < len(f) {
				rules = ruleRE.FindAllString(f[col], -1)
			}
			if name != "" && len(rules) > 0 {
				out[prefix+name] = rules
			}
		}
	}
	return out
}

var ruleRE = regexp.MustCompile(`\bR[0-9]+\b`)

// diagnosisTally is a Markdown table, per lab, of the wrong programs the
// suite caught: how many got a diagnosis and, of those whose rule the
// programs' lists give, how many were diagnosed as a mistake breaking
// that rule (top-1).
func diagnosisTally(checks []grader.Check, programs string) string {
	type tally struct {
		caught, diagnosed, known, right int
		wrongly                         []string
	}
	var order []string
	per := map[string]*tally{}
	rulesOf := map[string]map[string][]string{}
	for _, c := range checks {
		if c.Kind != "wrong" || !c.OK || c.Report == nil {
			continue
		}
		t := per[c.Lab.Dir]
		if t == nil {
			t = &tally{}
			per[c.Lab.Dir] = t
			order = append(order, c.Lab.Dir)
			rules := programRules(filepath.Join(programs, c.Lab.Dir))
			for k, v := range programRules(filepath.Join(programs, fmt.Sprintf("%02d", c.Lab.Number))) {
				rules[k] = v
			}
			rulesOf[c.Lab.Dir] = rules
		}
		t.caught++
		d := c.Report.Diagnosis
		if d == nil {
			continue
		}
		t.diagnosed++
		want := rulesOf[c.Lab.Dir][c.Name]
		if len(want) == 0 {
			continue
		}
		t.known++
		if slices.ContainsFunc(d.Rules, func(r string) bool { return slices.Contains(want, r) }) {
			t.right++
		} else {
			t.wrongly = append(t.wrongly, fmt.Sprintf("%s (%s) as %s (%s)", c.Name, strings.Join(want, " "), d.Mistake, strings.Join(d.Rules, " ")))
		}
	}
	var b strings.Builder
	b.WriteString("| lab | caught programs diagnosed | diagnoses naming the program's rule (top-1) | diagnosed otherwise |\n| --- | --- | --- | --- |\n")
	for _, lab := range order {
		t := per[lab]
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", lab, pct(t.diagnosed, t.caught), pct(t.right, t.known), strings.Join(t.wrongly, "; "))
	}
	return b.String()
}
