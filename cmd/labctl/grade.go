package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/workpool"
)

type gradeOpts struct {
	out      string
	race     string
	timeout  time.Duration
	parallel int
	redis    string
}

var gradeCmd = &command{
	name:  "grade",
	usage: "[flags] LAB SUBMISSIONS_DIR",
	short: "grade a folder of student submissions (instructors)",
	long: `
Grade runs the lab's pristine suite over every submission in SUBMISSIONS_DIR,
one subdirectory per student. A submission is either the lab package's .go
files directly, or a copy of the kit that holds them in labs/NN-name/. Test
files in a submission are ignored: the kit's own tests always run.

For each student it writes OUT/<student>/feedback.md, feedback.html,
report.json and results.json (Gradescope's format); for the class,
OUT/gradebook.csv and OUT/summary.md. A submission that does not compile,
panics, exits, races or hangs gets a clear result; it never stops the batch.
Exit status is 0 when every submission was graded, whatever the scores.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &gradeOpts{}
		fs.StringVar(&o.out, "out", "graded", "directory for the feedback and the gradebook")
		fs.StringVar(&o.race, "race", "auto", "race detector: auto, on, off")
		fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "time limit per submission")
		fs.IntVar(&o.parallel, "parallel", 0, "submissions graded at once (0: one per CPU)")
		fs.StringVar(&o.redis, "redis", "", "run Redis-backed labs against this real server (host:port)")
		return func(ctx context.Context, e *env, args []string) error { return runGrade(ctx, e, o, args) }
	},
}

func runGrade(ctx context.Context, e *env, o *gradeOpts, args []string) error {
	if len(args) != 2 {
		return usagef("grade: want LAB SUBMISSIONS_DIR, e.g. labctl grade 1 ./submissions")
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	lab, err := resolveLab(args[0])
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(args[1])
	if err != nil {
		return usagef("grade: %v", err)
	}
	var students []string
	for _, d := range entries {
		if d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			students = append(students, d.Name())
		}
	}
	if len(students) == 0 {
		return usagef("grade: %s has no submission directories (want one subdirectory per student)", args[1])
	}
	sort.Strings(students)
	race, err := e.raceMode(o.race)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return usagef("grade: --out: %v", err)
	}
	var extraEnv []string
	if o.redis != "" {
		entry, err := checkRedis(ctx, o.redis)
		if err != nil {
			return err
		}
		extraEnv = append(extraEnv, entry)
	}
	par := o.parallel
	if par <= 0 {
		par = max(1, min(4, runtime.NumCPU()))
	}
	fmt.Fprintf(e.stderr, "grading lab %02d %s: %d submissions, %d at a time\n", lab.Number, lab.Slug, len(students), par)

	results := make([]gradebook.Result, len(students))
	var mu sync.Mutex
	done := 0
	_ = workpool.Each(ctx, par, len(students), func(i int) {
		student := students[i]
		g := gradebook.Result{Student: student}
		impl, err := findSubmission(filepath.Join(args[1], student), lab)
		if err == nil {
			g.Report, err = grader.RunGoTest(ctx, grader.Options{Root: root, Lab: lab, Impl: impl, Target: student, Race: race, Timeout: o.timeout, Env: extraEnv})
		}
		g.Err = err
		if werr := gradebook.WriteStudent(o.out, lab, g); werr != nil && g.Err == nil {
			g.Err = werr
		}
		results[i] = g
		mu.Lock()
		done++
		fmt.Fprintf(e.stderr, "[%d/%d] %s: %s\n", done, len(students), student, g.Verdict())
		mu.Unlock()
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := gradebook.WriteClass(o.out, lab, results); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "graded %d submissions: feedback in %s/<student>/, gradebook in %s\n", len(results), o.out, filepath.Join(o.out, "gradebook.csv"))
	return nil
}

// findSubmission returns the directory holding the submission's .go files.
func findSubmission(dir string, lab grader.Lab) (string, error) {
	for _, d := range []string{dir, filepath.Join(dir, "labs", lab.Dir), filepath.Join(dir, lab.Dir)} {
		if files, _ := filepath.Glob(filepath.Join(d, "*.go")); hasSource(files) {
			return d, nil
		}
	}
	return "", fmt.Errorf("no Go source files found (looked in the folder itself and in labs/%s/)", lab.Dir)
}

func hasSource(files []string) bool {
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	return false
}
