package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fourth-outcome/labkit/formats"
	"github.com/fourth-outcome/labkit/gradebook"
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
	res, err := gradeClass(ctx, e, o, args)
	if err == nil {
		if err := format.Render(e.stdout, formats.Input{Student: res.Students[0], Class: res.Class, Term: term.Options{Width: term.Width(e.stdout)}}); err != nil {
			return fmt.Errorf("grade: --format %s: %w", format.Name, err)
		}
		return gradeSummary(e, e.stderr, o, res)
	}
	if o.format == "gradescope" {
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
