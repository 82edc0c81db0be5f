package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/formats"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/intake"
	"github.com/fourth-outcome/labkit/term"
)

// runGradeFormat grades a class of one submission and prints its result in
// o.format, a format of the registry (formats.Lookup), on e.stdout; the
// summary line labctl grade prints goes to e.stderr instead. For gradescope
// the result is printed whatever happens once the flags are read: a
// grading that fails gives score 0 and the reason, so that the autograder
// always has a results.json.
func runGradeFormat(ctx context.Context, e *env, o *gradeOpts, args []string) error {
	format, err := formats.Lookup(o.format)
	if err != nil {
		return usagef("grade: --format: %v", err)
	}
	var printed bool
	inner := *o
	inner.report = func(students []gradebook.Student, opts gradebook.Options) error {
		printed = true
		if err := format.Render(e.stdout, formats.Input{Student: students[0], Class: opts, Term: term.Options{Width: term.Width(e.stdout)}}); err != nil {
			return fmt.Errorf("grade: --format %s: %w", format.Name, err)
		}
		return nil
	}
	quiet := &env{stdout: e.stderr, stderr: e.stderr, getwd: e.getwd, root: e.root}
	err = runGrade(ctx, quiet, &inner, args)
	if e.root == "" {
		e.root = quiet.root
	}
	if err != nil && !printed && o.format == "gradescope" {
		reason := err.Error()
		var ue *usageError
		if errors.As(err, &ue) {
			reason = ue.Msg
		}
		if perr := writeJSON(e.stdout, gradebook.GradescopeFailure(reason)); perr != nil {
			return errors.Join(err, perr)
		}
	}
	return err
}

func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
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
