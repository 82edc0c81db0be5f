// Package formats is the registry of the kit's report formats: md, term,
// json, gradescope, classroom and csv. Every format renders one learner's
// finalized results (each grader.Report after Finalize) and computes
// nothing of its own: a score, a status or a verdict it prints is the one
// Finalize set. labctl check and labctl grade --format look a format up
// here by name, so the two commands offer the same formats and render them
// the same way, as gotestsum keeps its event formatters apart from the run
// they print.
package formats

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fourth-outcome/labkit/feedback"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/term"
)

// Input is what a format renders: one learner's results, and the settings
// of the view.
type Input struct {
	// Student holds the learner's results, one per lab graded; labctl
	// check passes one.
	Student gradebook.Student
	// Class holds the class-wide settings: the labs, weights, the docs
	// base and the paths to scrub.
	Class gradebook.Options
	// Learner is set when the learner reads the output as they work
	// (labctl check): md and term then speak to them, with Markdown's hint
	// level and next step; otherwise md is the instructor's feedback file.
	Learner bool
	// Markdown holds the learner view's hint level and links (Learner).
	Markdown feedback.MarkdownOptions
	// Term holds the terminal's settings for term.
	Term term.Options
	// Getenv reads the environment; classroom appends to the files that
	// GITHUB_STEP_SUMMARY and GITHUB_OUTPUT name. Nil means os.Getenv.
	Getenv func(string) string
}

// Format is one way to render an Input.
type Format struct {
	Name string // what --format takes: "md"
	Doc  string // one line for --help
	// Render writes in to w.
	Render func(w io.Writer, in Input) error
}

// ErrUnknown is returned by Lookup for a name no format has.
var ErrUnknown = errors.New("unknown format")

// ErrEmpty is returned by term when the input holds no lab.
var ErrEmpty = errors.New("no report to render")

// All returns every format, in the order --help lists them.
func All() []Format {
	return []Format{
		{Name: "term", Doc: "the one-screen summary for a terminal (labctl check's default)", Render: renderTerm},
		{Name: "md", Doc: "the full feedback as Markdown, every failing case", Render: renderMarkdown},
		{Name: "json", Doc: "the report as JSON, with its \"version\"", Render: renderJSON},
		{Name: "gradescope", Doc: "Gradescope's results.json", Render: renderGradescope},
		{Name: "classroom", Doc: "GitHub Classroom's points line, step output and job summary", Render: renderClassroom},
		{Name: "csv", Doc: "the gradebook row: a column per lab, the total, the maximum and the late penalty", Render: renderCSV},
	}
}

// Names returns the formats' names, in the order of All.
func Names() []string {
	var out []string
	for _, f := range All() {
		out = append(out, f.Name)
	}
	return out
}

// Lookup returns the format called name, or an error wrapping ErrUnknown
// that lists the names there are.
func Lookup(name string) (Format, error) {
	for _, f := range All() {
		if f.Name == name {
			return f, nil
		}
	}
	return Format{}, fmt.Errorf("%w %q: want %s", ErrUnknown, name, strings.Join(Names(), ", "))
}

// single returns the one lab report of in, for the formats that render a
// lab as the learner sees it.
func single(in Input) (gradebook.Result, bool) {
	if in.Student.Err != nil || len(in.Student.Labs) != 1 || in.Student.Labs[0].Report == nil {
		return gradebook.Result{}, false
	}
	return in.Student.Labs[0], true
}

func renderTerm(w io.Writer, in Input) error {
	if len(in.Student.Labs) == 0 {
		return ErrEmpty
	}
	var b strings.Builder
	for i, r := range in.Student.Labs {
		if i > 0 {
			b.WriteString("\n")
		}
		if r.Report == nil {
			// Not graded or no files: the instructor's words say why.
			b.WriteString(gradebook.LabMarkdown(r, in.Class))
			continue
		}
		o := in.Term
		if in.Learner {
			o.Markdown = in.Markdown
		} else {
			o.Markdown = feedback.MarkdownOptions{Instructor: true, SiteBase: in.Class.DocsBase}
		}
		b.WriteString(term.Feedback(r.Report, r.Lab, o))
	}
	_, err := io.WriteString(w, in.Class.Redact(b.String()))
	return err
}

func renderMarkdown(w io.Writer, in Input) error {
	if r, ok := single(in); ok && in.Learner {
		_, err := io.WriteString(w, feedback.Markdown(r.Report, r.Lab, in.Markdown))
		return err
	}
	_, err := io.WriteString(w, gradebook.StudentMarkdown(in.Student, in.Class))
	return err
}

// renderJSON writes labctl check's json format, one lab's report, which
// carries the version of its shape (report.ReportVersion) itself, or the
// instructor's report.json of a student.
func renderJSON(w io.Writer, in Input) error {
	if r, ok := single(in); ok && in.Learner {
		return writeJSON(w, r.Report, in.Class)
	}
	return writeJSON(w, gradebook.ReportOf(in.Student, in.Class), in.Class)
}

func renderGradescope(w io.Writer, in Input) error {
	md := gradebook.StudentMarkdown(in.Student, in.Class)
	return writeJSON(w, gradebook.Gradescope(in.Student, in.Class, md), in.Class)
}

func renderClassroom(w io.Writer, in Input) error {
	getenv := in.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c := gradebook.Classroom(in.Student, in.Class)
	if _, err := fmt.Fprintf(w, "Points %s\n", c.Points()); err != nil {
		return err
	}
	if p := getenv("GITHUB_STEP_SUMMARY"); p != "" {
		md := gradebook.StudentMarkdown(in.Student, in.Class)
		if err := appendFile(p, []byte(gradebook.ClassroomSummary(in.Student, in.Class, md))); err != nil {
			return fmt.Errorf("job summary: %w", err)
		}
	}
	if p := getenv("GITHUB_OUTPUT"); p != "" {
		data, err := json.Marshal(c)
		if err != nil {
			return err
		}
		line := "result=" + base64.StdEncoding.EncodeToString(data) + "\n"
		if err := appendFile(p, []byte(line)); err != nil {
			return fmt.Errorf("step output: %w", err)
		}
	}
	return nil
}

func renderCSV(w io.Writer, in Input) error {
	students := []gradebook.Student{in.Student}
	book, _ := gradebook.Rows(students, in.Class.Counted(students))
	return gradebook.WriteCSV(w, book)
}

func writeJSON(w io.Writer, v any, o gradebook.Options) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, o.Redact(string(data))+"\n")
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
