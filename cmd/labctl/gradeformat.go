package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/intake"
)

// gradeFormats are the values of labctl grade --format.
var gradeFormats = []string{"gradescope", "classroom"}

// runGradeFormat grades a class of one submission and prints its result in
// o.format on e.stdout; the summary line labctl grade prints goes to
// e.stderr instead. For gradescope the result is printed whatever happens
// once the flags are read: a grading that fails gives score 0 and the
// reason, so that the autograder always has a results.json.
func runGradeFormat(ctx context.Context, e *env, o *gradeOpts, args []string) error {
	if !slices.Contains(gradeFormats, o.format) {
		return usagef("grade: --format %q: want %s", o.format, strings.Join(gradeFormats, " or "))
	}
	var printed bool
	inner := *o
	inner.report = func(students []gradebook.Student, opts gradebook.Options) error {
		printed = true
		return printFormat(e.stdout, o.format, students[0], opts)
	}
	quiet := &env{stdout: e.stderr, stderr: e.stderr, getwd: e.getwd, root: e.root}
	err := runGrade(ctx, quiet, &inner, args)
	if e.root == "" {
		e.root = quiet.root
	}
	if err != nil && !printed && o.format == "gradescope" {
		reason := err.Error()
		var ue *usageError
		if errors.As(err, &ue) {
			reason = ue.msg
		}
		if perr := writeJSON(e.stdout, gradebook.GradescopeFailure(reason)); perr != nil {
			return errors.Join(err, perr)
		}
	}
	return err
}

// printFormat writes one student's result for a platform.
func printFormat(w io.Writer, format string, s gradebook.Student, o gradebook.Options) error {
	md := gradebook.StudentMarkdown(s, o)
	switch format {
	case "gradescope":
		return writeJSON(w, gradebook.Gradescope(s, o, md))
	case "classroom":
		c := gradebook.Classroom(s, o)
		if _, err := fmt.Fprintf(w, "Points %s\n", c.Points()); err != nil {
			return err
		}
		if p := os.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
			if err := appendFile(p, []byte(gradebook.ClassroomSummary(s, o, md))); err != nil {
				return fmt.Errorf("grade: job summary: %w", err)
			}
		}
		if p := os.Getenv("GITHUB_OUTPUT"); p != "" {
			data, err := json.Marshal(c)
			if err != nil {
				return err
			}
			line := "result=" + base64.StdEncoding.EncodeToString(data) + "\n"
			if err := appendFile(p, []byte(line)); err != nil {
				return fmt.Errorf("grade: step output: %w", err)
			}
		}
		return nil
	}
	return usagef("grade: --format %q: want %s", format, strings.Join(gradeFormats, " or "))
}

func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// presentLabs keeps the labs that some submission has files for, leaving
// out a lab whose files are the kit's starter unchanged (a copy of the
// whole release has every lab's folder). With none left, it keeps every
// lab, so that the feedback says what was looked for.
func presentLabs(root string, labs []course.Lab, subs []intake.Submission) []course.Lab {
	var out []course.Lab
	for _, l := range labs {
		for _, s := range subs {
			dir, ok := s.Labs[l.Number]
			if ok && !sameGoFiles(dir, filepath.Join(root, "labs", l.Dir)) {
				out = append(out, l)
				break
			}
		}
	}
	if len(out) == 0 {
		return labs
	}
	return out
}

// sameGoFiles reports whether two folders hold the same non-test .go files,
// byte for byte.
func sameGoFiles(a, b string) bool {
	fa, errA := goSources(a)
	fb, errB := goSources(b)
	if errA != nil || errB != nil || len(fa) != len(fb) {
		return false
	}
	for name, data := range fa {
		if other, ok := fb[name]; !ok || !bytes.Equal(data, other) {
			return false
		}
	}
	return true
}

func goSources(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, en := range entries {
		n := en.Name()
		if !en.Type().IsRegular() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		out[n] = data
	}
	return out, nil
}
