package gradebook

import (
	"strings"

	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fourth-outcome/labkit/changelog"
	"github.com/fourth-outcome/labkit/feedback"

	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/lateness"
)

// Previous is what a student's last grade was, kept when a regrade is made
// with another kit or another level of the rules (package changelog), so
// that the feedback can explain a difference in score.
type Previous struct {
	Kit    string      `json:"kit"`
	Rules  int         `json:"rules"`
	Scores map[int]int `json:"scores"` // by lab number, the labs graded
}

// ClassFile is OUT/class.json: the class-wide settings a grading wrote its
// outputs with, so that a partial regrade and a merge of shards render the
// class as the whole grading would.
type ClassFile struct {
	Labs     []int           `json:"labs"`
	Weights  map[int]float64 `json:"weights,omitempty"`
	DocsBase string          `json:"docs_base,omitempty"`
	Kit      string          `json:"kit"`
	Late     lateness.Policy `json:"late,omitzero"`
}

// ClassFileName is the name of the ClassFile in an output folder.
const ClassFileName = "class.json"

// ReadClassFile reads out/class.json; ok is false when there is none.
func ReadClassFile(out string) (c ClassFile, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(out, ClassFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &c)
	}
	if err != nil {
		return c, false, fmt.Errorf("read %s: %w", filepath.Join(out, ClassFileName), err)
	}
	return c, true, nil
}

// WriteClassFile writes out/class.json.
func WriteClassFile(out string, c ClassFile) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, ClassFileName), append(data, '\n'), 0o644)
}

// ClassFile is the ClassFile of o.
func (o Options) ClassFile() ClassFile {
	c := ClassFile{Weights: o.Weights, DocsBase: o.DocsBase, Kit: o.Kit, Late: o.Late}
	for _, l := range o.Labs {
		c.Labs = append(c.Labs, l.Number)
	}
	return c
}

// Options are c's options, with the labs looked up in course (every lab
// of the kit).
func (c ClassFile) Options(course []grader.Lab) (Options, error) {
	o := Options{Weights: c.Weights, DocsBase: c.DocsBase, Kit: c.Kit, Late: c.Late}
	for _, n := range c.Labs {
		l, ok := findLab(course, n)
		if !ok {
			return o, fmt.Errorf("%s names lab %d, which this kit does not have", ClassFileName, n)
		}
		o.Labs = append(o.Labs, l)
	}
	return o, nil
}

func findLab(labs []grader.Lab, n int) (grader.Lab, bool) {
	for _, l := range labs {
		if l.Number == n {
			return l, true
		}
	}
	return grader.Lab{}, false
}

// UnionLabs is the labs of a and b, each once, in course order.
func UnionLabs(a, b []grader.Lab) []grader.Lab {
	out := append([]grader.Lab(nil), a...)
	for _, l := range b {
		if _, ok := findLab(out, l.Number); !ok {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// LoadStudents reads back every student an earlier grading wrote into out
// (each folder's report.json), sorted by name, with their labs in the
// order of labs: a lab the record lacks is Missing. course is every lab of
// the kit, to look the records' labs up.
func LoadStudents(out string, labs []grader.Lab) ([]Student, error) {
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var students []Student
	for _, en := range entries {
		if !en.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(out, en.Name(), "report.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var rep StudentReport
		if err := json.Unmarshal(data, &rep); err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(out, en.Name(), "report.json"), err)
		}
		if rep.Folder != en.Name() {
			continue // a copy under another name: not a record of this folder
		}
		students = append(students, rep.AsStudent(labs))
	}
	sort.Slice(students, func(i, j int) bool { return students[i].Name < students[j].Name })
	return students, nil
}

// AsStudent is the Student the report was written from, its labs in the
// order of labs.
func (rep StudentReport) AsStudent(labs []grader.Lab) Student {
	s := Student{Name: rep.Student, Entry: rep.Entry, ID: rep.ID, Notes: rep.Notes, Kit: rep.Kit, Rules: rep.Rules,
		Prints: rep.Fingerprints, Previous: rep.Previous}
	if rep.Submitted != 0 {
		s.Submitted = time.Unix(rep.Submitted, 0).UTC()
	}
	if rep.Error != "" {
		s.Err = errors.New(rep.Error)
		return s
	}
	for _, l := range labs {
		r := Result{Student: rep.Student, Lab: l, Missing: true}
		for _, got := range rep.Labs {
			if got.Lab != l.Number {
				continue
			}
			r.Missing, r.Report = got.Missing, got.Report
			if got.Error != "" {
				r.Err = errors.New(got.Error)
			}
		}
		s.Labs = append(s.Labs, r)
	}
	return s
}

// stamped is s with its kit and rules level filled in from o and the
// changelog when unset: a grade made now.
func (s Student) stamped(o Options) Student {
	if s.Kit == "" {
		s.Kit = o.Kit
	}
	if s.Rules == 0 {
		s.Rules = changelog.Level()
	}
	return s
}

// gradedWith is the feedback's first lines: the kit version and rules
// level the grade was made with, and, after a regrade under others, what
// changed in each lab's score and the rule changes in between.
func gradedWith(s Student, o Options) string {
	s = s.stamped(o)
	if s.Kit == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Graded with kit %s (rules level %d; see docs/changelog.md).\n\n", s.Kit, s.Rules)
	p := s.Previous
	if p == nil {
		return b.String()
	}
	for _, r := range s.Labs {
		before, ok := p.Scores[r.Lab.Number]
		if !ok || before == r.Score() || !r.Graded() {
			continue
		}
		fmt.Fprintf(&b, "Lab %02d was regraded: %d before (kit %s, rules level %d), %d now.", r.Lab.Number, before, p.Kit, p.Rules, r.Score())
		if changes := changelog.Between(p.Rules, s.Rules, r.Lab.Number); len(changes) > 0 {
			b.WriteString(" Rule changes in between:\n\n")
			for _, e := range changes {
				fmt.Fprintf(&b, "- %s\n", feedback.EscapeInline(e.String()))
			}
			b.WriteString("\n")
		} else {
			b.WriteString(" No rule change of this lab lies in between: the difference comes from the kit's code or the run.\n\n")
		}
	}
	return b.String()
}

// PreviousOf is what a regrade keeps of the student's last grade old: its
// kit, rules level and scores, when they differ from the grade made now
// under o; nil when the same kit and rules made both.
func PreviousOf(old Student, o Options) *Previous {
	if old.Kit == "" || (old.Kit == o.Kit && old.Rules == changelog.Level()) {
		return old.Previous
	}
	p := &Previous{Kit: old.Kit, Rules: old.Rules, Scores: map[int]int{}}
	for _, r := range old.Labs {
		if r.Graded() && !r.Missing {
			p.Scores[r.Lab.Number] = r.Score()
		}
	}
	return p
}
