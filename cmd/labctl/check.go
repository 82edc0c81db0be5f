package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/render"
)

type checkOpts struct {
	json    bool
	seed    string
	race    string
	redis   string
	timeout time.Duration
	html    string
	quiet   bool
}

var checkCmd = &command{
	name:  "check",
	usage: "[flags] [LAB]",
	short: "run a lab's suite on your code and explain what fails",
	long: `
Check runs the lab's conformance suite against your code in labs/NN-name/ and
prints feedback: the score, each failing case with why it matters, what
happened (with a timeline of the interleaving), the misconception behind it,
a hint, and the docs section to read.

LAB is a number or a name: 1, 01, claim or 01-claim. Without LAB, check picks
the first lab that has not passed yet.

The suite that runs is the kit's own pristine copy: edits to the lab's test
file change nothing. Exit status 0 means every case passes, 1 means some fail,
2 means bad input.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &checkOpts{}
		fs.BoolVar(&o.json, "json", false, "write the report as JSON (for tools) instead of Markdown")
		fs.StringVar(&o.seed, "seed", "", "replay a randomised run with this seed (printed by a failing case)")
		fs.StringVar(&o.race, "race", "auto", "race detector: auto (on when cgo works), on, off")
		fs.StringVar(&o.redis, "redis", "", "run Redis-backed labs against this real server (host:port) instead of the embedded one")
		fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up on a suite that runs longer than this")
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
	if o.seed != "" {
		if _, err := strconv.ParseInt(o.seed, 10, 64); err != nil {
			return usagef("--seed %q: want an integer", o.seed)
		}
	}
	st, err := loadState(root)
	if err != nil {
		return err
	}
	var lab grader.Lab
	if len(args) == 1 {
		if lab, err = resolveLab(args[0]); err != nil {
			return err
		}
	} else {
		lab = firstUnpassed(st)
	}
	if _, err := os.Stat(filepath.Join(root, "labs", lab.Dir)); err != nil {
		return usagef("lab %s: %v", lab.Dir, err)
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
	gopts := grader.Options{
		Root:    root,
		Lab:     lab,
		Target:  "labs/" + lab.Dir,
		Race:    race,
		Timeout: o.timeout,
		Seed:    o.seed,
		Env:     extraEnv,
	}
	if !o.quiet && !o.json {
		fmt.Fprintf(e.stderr, "checking lab %02d %s (%d cases)...\n", lab.Number, lab.Slug, len(lab.Cases))
		gopts.Progress = e.stderr
	}
	rep, err := grader.RunGoTest(ctx, gopts)
	if err != nil {
		return err
	}

	prev := st.Labs[lab.Dir]
	st.Labs[lab.Dir] = labState{Score: rep.Score, Total: rep.Total, Passed: rep.Passed, CheckedAt: time.Now().UTC(), HintLevel: prev.HintLevel}
	if err := saveState(root, st); err != nil {
		fmt.Fprintf(e.stderr, "labctl: warning: %v\n", err)
	}

	markdown := grader.Markdown(rep, lab, grader.MarkdownOptions{})
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		fmt.Fprint(e.stdout, markdown)
	}
	if o.html != "" {
		page, err := render.Page(fmt.Sprintf("Lab %02d feedback", lab.Number), grader.Markdown(rep, lab, grader.MarkdownOptions{DocsPrefix: relDocsPrefix(root, o.html)}))
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.html, page, 0o644); err != nil {
			return usagef("--html: %v", err)
		}
	}
	if !rep.Passed {
		return errFailed
	}
	return nil
}

// firstUnpassed is the first lab whose last recorded check did not pass.
func firstUnpassed(st *state) grader.Lab {
	built := course.Built()
	for _, l := range built {
		if !st.Labs[l.Dir].Passed {
			return l.Lab
		}
	}
	return built[len(built)-1].Lab
}

// relDocsPrefix is the path from the directory of file back to the kit root,
// so links in a written HTML page reach docs/.
func relDocsPrefix(root, file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(filepath.Dir(abs), root)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel) + "/"
}
