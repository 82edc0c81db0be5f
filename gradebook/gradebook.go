// Package gradebook writes what grading a class produces: for each student,
// feedback.md, feedback.html, report.json and Gradescope's results.json; for
// the class, gradebook.csv (one row per student, ready to import into an
// LMS), cases.csv (every case's status), summary.md and summary.html. It
// only writes; the grader runs the suites. Everything but report.json and
// results.json's execution_time is deterministic: the same reports give the
// same bytes, and the class files are rendered from the students'
// report.json alone (LoadStudents), so a partial regrade and a merge of
// shards write what one grading of the whole class would.
package gradebook

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/feedback"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/lateness"
	"github.com/fourth-outcome/labkit/render"
)

// Result is one lab of one student's submission after grading: the
// report, or the reason it could not be graded.
type Result struct {
	Student string
	Lab     grader.Lab
	Report  *grader.Report // nil when Err is set or the lab is Missing
	Err     error          // why the submission could not be graded
	// Missing is set when the submission has no files for this lab: it
	// scores 0 and counts as graded.
	Missing bool
}

// Verdict is the result in a few words: "87/100", "0/100 (does not
// compile)", "not graded: ...".
func (r Result) Verdict() string {
	switch {
	case r.Err != nil:
		return "not graded: " + r.Err.Error()
	case r.Missing:
		return fmt.Sprintf("0/%d (no files for this lab)", r.Lab.TotalPoints())
	case r.Report.Build != nil:
		return fmt.Sprintf("%d/%d (does not compile)", r.Report.Score(), r.Report.Total)
	case len(r.Report.Problems) > 0:
		first, _, _ := strings.Cut(r.Report.Problems[0], "\n")
		return fmt.Sprintf("%d/%d (%s)", r.Report.Score(), r.Report.Total, first)
	default:
		return fmt.Sprintf("%d/%d", r.Report.Score(), r.Report.Total)
	}
}

// Graded reports whether the result has a score.
func (r Result) Graded() bool { return r.Err == nil }

// Score is the lab's score, 0 when not graded or missing.
func (r Result) Score() int {
	if r.Report == nil {
		return 0
	}
	return r.Report.Score()
}

// Student is one entry of the class folder: its labs, or why none could be
// graded.
type Student struct {
	Name  string
	Labs  []Result // in the order of Options.Labs
	Notes []string // from intake: symlinks left out, test files ignored
	Err   error    // the submission could not be read at all

	Entry string // the entry in the class folder
	ID    string // the student ID an LMS export name carries, if any
	// Submitted is when the submission came in (an LMS's export, or the
	// entry's modification time); zero when unknown.
	Submitted time.Time
	// Kit and Rules are the kit version and the changelog level the
	// student was graded with (Options.Kit and changelog.Level() when
	// empty).
	Kit   string
	Rules int
	// Prints are the similarity fingerprints of each lab's own code (the
	// starter's left out), by lab number.
	Prints map[int][]uint64
	// Previous is the grade before this one, when it was made with
	// another kit or rules level.
	Previous *Previous
}

// Graded reports whether every lab of the student got a score.
func (s Student) Graded() bool {
	if s.Err != nil {
		return false
	}
	for _, r := range s.Labs {
		if !r.Graded() {
			return false
		}
	}
	return true
}

// Options are the class-wide settings of the outputs.
type Options struct {
	Labs []grader.Lab // the labs graded, in course order
	// Weights multiplies each lab's score in the total, by lab number;
	// a lab not in the map weighs 1.
	Weights map[int]float64
	// DocsBase is where feedback links the course's pages: the rendered
	// site ("../docs/" when shipped beside the feedback) or the URL it is
	// hosted at. Empty leaves links as kit paths.
	DocsBase string
	// Kit is the kit commit, printed in every feedback so a student can
	// reproduce the grade.
	Kit string
	// Scrub lists absolute paths (the kit checkout, the scratch space)
	// that must never reach a student; they are cut from every output.
	Scrub []string
	// Late is the late-work policy; the zero policy has no deadline.
	Late lateness.Policy
	// counted, when set, holds the labs that count in the maximum: those
	// some student of the class has files for (WriteClass sets it).
	counted map[int]bool
}

func (o Options) weight(lab int) float64 {
	if w, ok := o.Weights[lab]; ok {
		return w
	}
	return 1
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._@-]+`)

// Dir is the output folder name for a student: the name itself when it is
// safe, otherwise a cleaned name plus a hash of the original, so two names
// that clean up alike ("a b", "a_b") never overwrite each other.
func Dir(student string) string {
	clean := unsafeName.ReplaceAllString(student, "_")
	if clean == student && clean != "." && clean != ".." {
		return student
	}
	h := fnv.New32a()
	h.Write([]byte(student))
	return fmt.Sprintf("%s-%08x", clean, h.Sum32())
}

var (
	tookRE      = regexp.MustCompile(` · took [0-9.]+s_`)
	goroutineRE = regexp.MustCompile(`goroutine \d+`)
	addrRE      = regexp.MustCompile(`\+?0x[0-9a-f]{4,}`)
	stampRE     = regexp.MustCompile(`\d{4}[/-]\d\d[/-]\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?`)
	durationRE  = regexp.MustCompile(`\(\d+\.\d+s\)`)
)

// scrub makes text fit for a student and stable from run to run: no
// machine paths, durations, timestamps, goroutine numbers or addresses.
// Redact cuts the paths listed in Scrub out of s, as every output does.
func (o Options) Redact(s string) string { return o.scrub(s) }

func (o Options) scrub(s string) string {
	for _, p := range o.Scrub {
		if p != "" && p != "/" {
			s = strings.ReplaceAll(s, p+string(filepath.Separator), "")
			s = strings.ReplaceAll(s, p, ".")
		}
	}
	kit := ""
	if o.Kit != "" {
		kit = " · kit " + o.Kit
	}
	s = tookRE.ReplaceAllString(s, kit+"_")
	s = goroutineRE.ReplaceAllString(s, "goroutine N")
	s = addrRE.ReplaceAllString(s, "0x…")
	s = stampRE.ReplaceAllString(s, "(time)")
	s = durationRE.ReplaceAllString(s, "")
	return s
}

// LabMarkdown is one lab's feedback for the student, scrubbed.
func LabMarkdown(r Result, o Options) string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("# Lab %02d · %s: not graded\n\nThe submission could not be graded: %s\n", r.Lab.Number, r.Lab.Title, feedback.EscapeInline(o.scrub(r.Err.Error())))
	case r.Missing:
		return fmt.Sprintf("# Lab %02d · %s: 0/%d\n\nThe submission has no files for this lab (looked for `labs/%s/`, `%s/` and `.go` files of package `%s`).\n", r.Lab.Number, r.Lab.Title, r.Lab.TotalPoints(), r.Lab.Dir, r.Lab.Dir, r.Lab.Slug)
	}
	return o.scrub(feedback.Markdown(r.Report, r.Lab, feedback.MarkdownOptions{Instructor: true, SiteBase: o.DocsBase}))
}

// StudentMarkdown is the student's whole feedback: notes from intake, then
// each lab's.
func StudentMarkdown(s Student, o Options) string {
	var b strings.Builder
	b.WriteString(gradedWith(s, o))
	if s.Err != nil {
		fmt.Fprintf(&b, "# Feedback for %s: not graded\n\nThe submission could not be read: %s\n", feedback.EscapeInline(s.Name), feedback.EscapeInline(o.scrub(s.Err.Error())))
	}
	if len(s.Notes) > 0 {
		b.WriteString("Notes on the submission:\n\n")
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "- %s\n", feedback.EscapeInline(o.scrub(n)))
		}
		b.WriteString("\n")
	}
	for i, r := range s.Labs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(LabMarkdown(r, o))
	}
	return b.String()
}

// StudentReport is report.json: every lab's full report, with timings.
type StudentReport struct {
	// Version is the version of this shape (grader.ReportVersion), as
	// Exercism's test runners version results.json.
	Version int              `json:"version"`
	Student string           `json:"student"`
	Folder  string           `json:"folder"`
	Kit     string           `json:"kit"`
	Rules   int              `json:"rules"` // the changelog level graded with
	Entry   string           `json:"entry,omitempty"`
	ID      string           `json:"id,omitempty"`
	Notes   []string         `json:"notes,omitempty"`
	Error   string           `json:"error,omitempty"`
	Labs    []StudentLabJSON `json:"labs"`
	// Submitted is when the submission came in, in seconds since 1970
	// (a number, which scrubbing a date would not keep), if known.
	Submitted    int64            `json:"submitted_unix,omitempty"`
	Fingerprints map[int][]uint64 `json:"fingerprints,omitempty"`
	Previous     *Previous        `json:"previous,omitempty"`
}

// StudentLabJSON is one lab in StudentReport.
type StudentLabJSON struct {
	Lab     int            `json:"lab"`
	Dir     string         `json:"dir"`
	Status  string         `json:"status"`
	Report  *grader.Report `json:"report,omitempty"`
	Missing bool           `json:"missing,omitempty"`
	Error   string         `json:"error,omitempty"`
}

// WriteStudent writes the student's feedback.md, feedback.html,
// report.json and results.json into out/Dir(student).
func WriteStudent(out string, s Student, o Options) error {
	s = s.stamped(o)
	dir := filepath.Join(out, Dir(s.Name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	md := StudentMarkdown(s, o)
	page, err := render.Page("Feedback: "+s.Name, md)
	if err != nil {
		return err
	}
	rj, _ := json.MarshalIndent(ReportOf(s, o), "", "  ")
	gs, _ := json.MarshalIndent(Gradescope(s, o, md), "", "  ")
	files := []struct {
		name string
		data []byte
	}{
		{"feedback.md", []byte(md)}, {"feedback.html", page},
		{"report.json", []byte(o.scrub(string(rj)))}, {"results.json", []byte(o.scrub(string(gs)))},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), append(f.data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ReportOf is the student's report.json before scrubbing: every lab's
// full report, with timings. Its Version is ReportVersion.
func ReportOf(s Student, o Options) StudentReport {
	s = s.stamped(o)
	rep := StudentReport{Version: grader.ReportVersion, Student: s.Name, Folder: Dir(s.Name), Kit: s.Kit, Rules: s.Rules, Entry: s.Entry, ID: s.ID, Notes: s.Notes, Labs: []StudentLabJSON{},
		Fingerprints: s.Prints, Previous: s.Previous}
	if !s.Submitted.IsZero() {
		rep.Submitted = s.Submitted.Unix()
	}
	if s.Err != nil {
		rep.Error = o.scrub(s.Err.Error())
	}
	for _, r := range s.Labs {
		l := StudentLabJSON{Lab: r.Lab.Number, Dir: r.Lab.Dir, Status: o.scrub(r.Verdict()), Report: r.Report, Missing: r.Missing}
		if r.Err != nil {
			l.Error = o.scrub(r.Err.Error())
		}
		rep.Labs = append(rep.Labs, l)
	}
	return rep
}

// Total is the student's weighted total and the weighted maximum, over the
// labs that count (see Counted).
func Total(s Student, o Options) (score, max float64) {
	for _, r := range s.Labs {
		if !o.counts(r.Lab.Number) {
			continue
		}
		w := o.weight(r.Lab.Number)
		score += float64(r.Score()) * w
		max += float64(r.Lab.TotalPoints()) * w
	}
	return score, max
}

// Counted returns o with the maximum counted over the labs that some
// student has files for, so that a lab nobody submitted does not count as
// 0 out of its points for everyone. With no lab submitted at all, every
// lab counts.
func (o Options) Counted(students []Student) Options {
	o.counted = map[int]bool{}
	for _, s := range students {
		for _, r := range s.Labs {
			if !r.Missing {
				o.counted[r.Lab.Number] = true
			}
		}
	}
	if len(o.counted) == 0 {
		o.counted = nil
	}
	return o
}

func (o Options) counts(lab int) bool { return o.counted == nil || o.counted[lab] }

// Late is the student's late-work verdict under o.Late.
func Late(s Student, o Options) lateness.Verdict {
	return o.Late.Apply(s.Submitted, s.Name, s.ID, Dir(s.Name))
}

// Final is the student's total after the late penalty.
func Final(s Student, o Options) float64 {
	total, _ := Total(s, o)
	v := Late(s, o)
	return math.Round(total*(100-v.Penalty)) / 100
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// status is a student's one-word standing for the gradebook.
func status(s Student) string {
	switch {
	case s.Err != nil:
		return "not graded: " + s.Err.Error()
	case s.Graded():
		return "graded"
	}
	var why []string
	for _, r := range s.Labs {
		if !r.Graded() {
			why = append(why, fmt.Sprintf("lab %02d %s", r.Lab.Number, r.Verdict()))
		}
	}
	return "partly graded: " + strings.Join(why, "; ")
}

// LabColumn is the header of a lab's column in gradebook.csv, with the
// lab's points, as an LMS import wants them: "lab 01 (100)".
func LabColumn(l grader.Lab) string { return fmt.Sprintf("lab %02d (%d)", l.Number, l.TotalPoints()) }

// WriteClass writes the class files into out: gradebook.csv (a row per
// student: name, output folder, status, a column per lab, the weighted
// total and its maximum over the labs submitted, the student ID an LMS
// export name carries, the kit version and rules level, the submission
// time, the days late, the penalty and the total after it), cases.csv
// (every case's status), summary.md and summary.html. Every cell is safe
// to open in a spreadsheet (see CSVCell).
func WriteClass(out string, students []Student, o Options) error {
	o = o.Counted(students)
	book, cases := Rows(students, o)
	for name, rows := range map[string][][]string{"gradebook.csv": book, "cases.csv": cases} {
		var buf bytes.Buffer
		if err := WriteCSV(&buf, rows); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	md := SummaryMarkdown(students, o)
	if err := os.WriteFile(filepath.Join(out, "summary.md"), []byte(md), 0o644); err != nil {
		return err
	}
	page, err := render.Page("Class summary", md)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "summary.html"), page, 0o644)
}

// Rows are the rows of gradebook.csv (book) and cases.csv (cases), each
// with its header first and unescaped (WriteCSV makes every cell safe).
// o's maximum counts the labs Counted gave it, or every lab.
func Rows(students []Student, o Options) (book, cases [][]string) {
	header := []string{"student", "folder", "status"}
	for _, l := range o.Labs {
		header = append(header, LabColumn(l))
	}
	book = append(book, append(header, "total", "max", "id", "kit", "rules", "submitted", "days late", "penalty %", "final"))
	caseHeader := []string{"student", "folder", "id"}
	for _, l := range o.Labs {
		for _, c := range l.Cases {
			caseHeader = append(caseHeader, fmt.Sprintf("%02d %s", l.Number, c.Name))
		}
	}
	cases = append(cases, caseHeader)
	for _, s := range students {
		s = s.stamped(o)
		row := []string{s.Name, Dir(s.Name), o.scrub(status(s))}
		for i := range o.Labs {
			cell := ""
			if i < len(s.Labs) && s.Labs[i].Graded() {
				cell = strconv.Itoa(s.Labs[i].Score())
			}
			row = append(row, cell)
		}
		total, max := Total(s, o)
		late := Late(s, o)
		submitted := ""
		if !s.Submitted.IsZero() {
			submitted = s.Submitted.UTC().Format(time.RFC3339)
		}
		row = append(row, num(total), num(max), s.ID, s.Kit, strconv.Itoa(s.Rules), submitted, strconv.Itoa(late.DaysLate), num(late.Penalty), num(Final(s, o)))
		book = append(book, row)
		crow := []string{s.Name, Dir(s.Name), s.ID}
		for i, l := range o.Labs {
			for j := range l.Cases {
				cell := ""
				if i < len(s.Labs) && s.Labs[i].Report != nil && j < len(s.Labs[i].Report.Cases) {
					cell = string(s.Labs[i].Report.Cases[j].Status)
				} else if i < len(s.Labs) && s.Labs[i].Missing {
					cell = "missing"
				}
				crow = append(crow, cell)
			}
		}
		cases = append(cases, crow)
	}
	return book, cases
}

// CSVCell makes a cell safe to open in a spreadsheet, as OWASP's CSV
// injection advice has it: a cell that starts with =, +, -, @, a tab or a
// carriage return (a formula to Excel, LibreOffice or Google Sheets) gets
// a leading single quote, and so a formula is shown, never run. A number
// ("-1.5") is left as it is.
func CSVCell(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// WriteCSV writes rows as CSV to w, every cell made safe by CSVCell.
func WriteCSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	for _, row := range rows {
		safe := make([]string, len(row))
		for i, c := range row {
			safe[i] = CSVCell(c)
		}
		if err := cw.Write(safe); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// caseTally counts how a case ended across the class.
type caseTally struct {
	name, concept              string
	order                      int
	fail, crash, timeout, race int
	notRun                     int
}

func (t caseTally) missed() int { return t.fail + t.crash + t.timeout + t.race + t.notRun }

// SummaryMarkdown is summary.md: every student's scores, then for each lab
// its cases by the share of the class that did not pass them, plain
// failures counted apart from crashes, timeouts, races and cases that never
// ran, with the concept to re-teach.
func SummaryMarkdown(students []Student, o Options) string {
	if o.counted == nil {
		o = o.Counted(students)
	}
	var b strings.Builder
	b.WriteString("# Class summary\n\n")
	graded := 0
	for _, s := range students {
		if s.Graded() {
			graded++
		}
	}
	fmt.Fprintf(&b, "%d submissions, %d fully graded", len(students), graded)
	if o.Kit != "" {
		fmt.Fprintf(&b, " · kit %s", o.Kit)
	}
	b.WriteString("\n\n| student | ")
	for _, l := range o.Labs {
		fmt.Fprintf(&b, "lab %02d | ", l.Number)
	}
	b.WriteString("total | notes |\n| --- |")
	for range o.Labs {
		b.WriteString(" ---: |")
	}
	b.WriteString(" ---: | --- |\n")
	for _, s := range students {
		fmt.Fprintf(&b, "| %s | ", mdCell(s.Name))
		var notes []string
		if s.Err != nil {
			notes = append(notes, "not graded: "+s.Err.Error())
		}
		for i := range o.Labs {
			if i >= len(s.Labs) {
				b.WriteString("— | ")
				continue
			}
			r := s.Labs[i]
			switch {
			case !r.Graded():
				b.WriteString("— | ")
				notes = append(notes, fmt.Sprintf("lab %02d %s", r.Lab.Number, r.Verdict()))
			case r.Missing:
				b.WriteString("0 | ")
				notes = append(notes, fmt.Sprintf("lab %02d: no files", r.Lab.Number))
			default:
				fmt.Fprintf(&b, "%d | ", r.Score())
				if v := r.Verdict(); strings.Contains(v, "(") {
					notes = append(notes, fmt.Sprintf("lab %02d %s", r.Lab.Number, v))
				}
			}
		}
		total, max := Total(s, o)
		fmt.Fprintf(&b, "%s/%s | %s |\n", num(total), num(max), mdCell(o.scrub(strings.Join(notes, "; "))))
	}
	for i, l := range o.Labs {
		tallies := map[string]*caseTally{}
		for j, c := range l.Cases {
			tallies[c.Name] = &caseTally{name: c.Name, concept: c.Concept, order: j}
		}
		n := 0
		for _, s := range students {
			if i >= len(s.Labs) || s.Labs[i].Report == nil {
				continue
			}
			n++
			for _, c := range s.Labs[i].Report.Cases {
				t := tallies[c.Name]
				if t == nil {
					continue
				}
				switch c.Status {
				case grader.StatusPass, grader.StatusSkip:
				case grader.StatusFail:
					t.fail++
				case grader.StatusPanic, grader.StatusCrash, grader.StatusNoFinish:
					t.crash++
				case grader.StatusTimeout:
					t.timeout++
				case grader.StatusRace:
					t.race++
				default:
					t.notRun++
				}
			}
		}
		fmt.Fprintf(&b, "\n## Lab %02d · %s\n\n", l.Number, l.Title)
		if n == 0 {
			b.WriteString("No submission of this lab ran.\n")
			continue
		}
		list := make([]*caseTally, 0, len(tallies))
		for _, t := range tallies {
			list = append(list, t)
		}
		sort.Slice(list, func(a, c int) bool {
			if list[a].missed() != list[c].missed() {
				return list[a].missed() > list[c].missed()
			}
			return list[a].order < list[c].order
		})
		fmt.Fprintf(&b, "Cases by the share of the %d submissions that ran this lab and did not pass them.\n\n", n)
		b.WriteString("| case | did not pass | failed | crashed | timed out | data race | not run | concept to re-teach |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
		for _, t := range list {
			concept := l.Concept(t.concept)
			link := concept.Title
			if concept.Docs != "" && o.DocsBase != "" {
				// summary.md sits one folder above the students' feedback.
				base := strings.TrimPrefix(o.DocsBase, "../")
				link = fmt.Sprintf("[%s](%s)", concept.Title, feedback.MarkdownOptions{SiteBase: base}.DocsLink(concept.Docs))
			}
			fmt.Fprintf(&b, "| `%s` | %d%% | %d | %d | %d | %d | %d | %s |\n", t.name, t.missed()*100/n, t.fail, t.crash, t.timeout, t.race, t.notRun, link)
		}
	}
	b.WriteString(lateSummary(students, o))
	b.WriteString(similaritySummary(students, o))
	return b.String()
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
