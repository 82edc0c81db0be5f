package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/grader"
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
	flags: func(fs *flag.FlagSet) any {
		o := &gradeOpts{}
		fs.StringVar(&o.out, "out", "graded", "directory for the feedback and the gradebook")
		fs.StringVar(&o.race, "race", "auto", "race detector: auto, on, off")
		fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "time limit per submission")
		fs.IntVar(&o.parallel, "parallel", 0, "submissions graded at once (0: one per CPU)")
		fs.StringVar(&o.redis, "redis", "", "run Redis-backed labs against this real server (host:port)")
		return o
	},
	run: runGrade,
}

type graded struct {
	student string
	rep     *grader.Report
	err     error
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._@-]+`)

// studentDir is the output folder name for a student: the name itself when
// it is safe, otherwise a cleaned name plus a hash of the original, so two
// names that clean up alike ("a b", "a_b") never overwrite each other.
func studentDir(name string) string {
	clean := unsafeName.ReplaceAllString(name, "_")
	if clean == name {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%s-%08x", clean, h.Sum32())
}

func runGrade(ctx context.Context, e *env, opts any, args []string) error {
	o := opts.(*gradeOpts)
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
	var env []string
	if o.redis != "" {
		if err := pingRedis(ctx, o.redis); err != nil {
			return err
		}
		env = append(env, "REDIS_ADDR="+o.redis)
	}
	par := o.parallel
	if par <= 0 {
		par = max(1, min(4, runtime.NumCPU()))
	}
	fmt.Fprintf(e.stderr, "grading lab %02d %s: %d submissions, %d at a time\n", lab.Number, lab.Slug, len(students), par)

	results := make([]graded, len(students))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i, student := range students {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			g := graded{student: student}
			impl, err := findSubmission(filepath.Join(args[1], student), lab)
			if err == nil {
				g.rep, err = grader.Run(ctx, grader.Options{Root: root, Lab: lab, Impl: impl, Target: student, Race: race, Timeout: o.timeout, Env: env})
			}
			g.err = err
			if werr := writeStudent(o.out, lab, g); werr != nil && g.err == nil {
				g.err = werr
			}
			results[i] = g
			mu.Lock()
			done++
			fmt.Fprintf(e.stderr, "[%d/%d] %s: %s\n", done, len(students), student, verdict(g))
			mu.Unlock()
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := writeGradebook(o.out, lab, results); err != nil {
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

func verdict(g graded) string {
	switch {
	case g.err != nil:
		return "not graded: " + g.err.Error()
	case g.rep.Build != nil:
		return fmt.Sprintf("%d/%d (does not compile)", g.rep.Score, g.rep.Total)
	case len(g.rep.Problems) > 0:
		first, _, _ := strings.Cut(g.rep.Problems[0], "\n")
		return fmt.Sprintf("%d/%d (%s)", g.rep.Score, g.rep.Total, first)
	default:
		return fmt.Sprintf("%d/%d", g.rep.Score, g.rep.Total)
	}
}

func writeStudent(out string, lab grader.Lab, g graded) error {
	dir := filepath.Join(out, studentDir(g.student))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var md string
	if g.err != nil {
		md = fmt.Sprintf("# Lab %02d · %s: not graded\n\nThe submission could not be graded: %s\n", lab.Number, lab.Title, g.err)
	} else {
		md = grader.Markdown(g.rep, lab, grader.MarkdownOptions{Instructor: true})
	}
	page, err := grader.RenderHTML(fmt.Sprintf("Lab %02d feedback: %s", lab.Number, g.student), md)
	if err != nil {
		return err
	}
	files := map[string][]byte{"feedback.md": []byte(md), "feedback.html": page}
	if g.rep != nil {
		rj, _ := json.MarshalIndent(g.rep, "", "  ")
		files["report.json"] = rj
	}
	gs, _ := json.MarshalIndent(gradescope(lab, g, md), "", "  ")
	files["results.json"] = gs
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// gradescopeResults is Gradescope's autograder results.json format.
type gradescopeResults struct {
	Score  int              `json:"score"`
	Output string           `json:"output"`
	Tests  []gradescopeTest `json:"tests"`
}

type gradescopeTest struct {
	Name     string `json:"name"`
	Score    int    `json:"score"`
	MaxScore int    `json:"max_score"`
	Status   string `json:"status"`
	Output   string `json:"output,omitempty"`
}

func gradescope(lab grader.Lab, g graded, md string) gradescopeResults {
	r := gradescopeResults{Output: md}
	if g.rep == nil {
		for _, c := range lab.Cases {
			r.Tests = append(r.Tests, gradescopeTest{Name: c.Name, MaxScore: c.Points, Status: "failed", Output: "not graded: " + g.err.Error()})
		}
		return r
	}
	r.Score = g.rep.Score
	for _, c := range g.rep.Cases {
		t := gradescopeTest{Name: c.Name, Score: c.Earned, MaxScore: c.Points, Status: "passed"}
		if c.Status != grader.StatusPass {
			t.Status = "failed"
			t.Output = fmt.Sprintf("%s: %s\n%s", c.Status, c.Explanation, strings.Join(c.Output, "\n"))
		}
		r.Tests = append(r.Tests, t)
	}
	return r
}

func writeGradebook(out string, lab grader.Lab, results []graded) error {
	f, err := os.Create(filepath.Join(out, "gradebook.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	header := []string{"student", "score", "total", "passed", "status"}
	for _, c := range lab.Cases {
		header = append(header, c.Name)
	}
	w.Write(header)
	var summary strings.Builder
	fmt.Fprintf(&summary, "# Lab %02d · %s: class summary\n\n| student | score | status |\n| --- | --- | --- |\n", lab.Number, lab.Title)
	failing := map[string]int{}
	for _, g := range results {
		row := []string{g.student}
		if g.rep == nil {
			row = append(row, "0", fmt.Sprint(lab.TotalPoints()), "false", verdict(g))
			for range lab.Cases {
				row = append(row, "")
			}
		} else {
			row = append(row, fmt.Sprint(g.rep.Score), fmt.Sprint(g.rep.Total), fmt.Sprint(g.rep.Passed), verdict(g))
			for _, c := range g.rep.Cases {
				row = append(row, string(c.Status))
				if c.Status != grader.StatusPass {
					failing[c.Name]++
				}
			}
		}
		w.Write(row)
		fmt.Fprintf(&summary, "| %s | %s | %s |\n", g.student, strings.SplitN(verdict(g), " ", 2)[0], verdict(g))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	summary.WriteString("\n## Cases most often failed\n\n")
	for _, c := range lab.Cases {
		if n := failing[c.Name]; n > 0 {
			fmt.Fprintf(&summary, "- `%s`: %d of %d submissions (%s)\n", c.Name, n, len(results), lab.Concept(c.Concept).Title)
		}
	}
	return os.WriteFile(filepath.Join(out, "summary.md"), []byte(summary.String()), 0o644)
}
