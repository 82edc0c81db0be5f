// Package feedback renders a finalized report (package report) as the
// Markdown a learner or an instructor reads: each failing case's property,
// misconception, evidence, timeline, hint and chapter, and the next step.
// It computes nothing: every score and status it prints is Finalize's.
package feedback

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fourth-outcome/labkit/diagnosis"
	"github.com/fourth-outcome/labkit/report"
)

// MarkdownOptions tunes feedback rendering.
type MarkdownOptions struct {
	// DocsPrefix is put before docs paths in links ("../" when the feedback
	// file lives one directory below the kit root). Empty leaves them
	// relative to the kit root.
	DocsPrefix string
	// Instructor feedback omits the "run labctl hint" advice.
	Instructor bool
	// Prog is how the student runs labctl, in the commands the feedback
	// suggests; empty means "go run ./cmd/labctl", run from the kit root.
	Prog string
	// SiteBase, when not empty, makes links to the course point into the
	// rendered docs site instead of at the Markdown sources:
	// "docs/01-claim.md#x" becomes SiteBase+"01-claim.html#x". It is
	// applied instead of DocsPrefix.
	SiteBase string
	// HintsSeen is the highest hint level the student has seen for this
	// lab (0 for none), and Hints how many the lab has (0 means three),
	// so the next step offers the next unseen hint, not the first one.
	HintsSeen, Hints int
	// RealTime is set for a run on the real clock (a Redis lab against a
	// real server): timelines are labelled real time, which differs from
	// run to run, instead of virtual time.
	RealTime bool
	// TimelineFigures adds, before each failing case's text timeline, a
	// reference to its drawing, the paragraph
	// ![Timeline of CASE ...](timelines/CASE.svg), which the HTML
	// feedback replaces by the drawing itself (render.InlineTimelines).
	TimelineFigures bool
}

// TimelineLabel is what case c's timeline is labelled with: the clock the
// suite says it was taken on, or, for a case with no such word, the run's.
func (o MarkdownOptions) TimelineLabel(c report.CaseResult) string {
	if c.Clock == "real" || (c.Clock == "" && o.RealTime) {
		return "real time, against a real server: it differs from run to run"
	}
	return "virtual time"
}

// DocsLink is where feedback links a course path such as
// "docs/01-claim.md#anchor": into the site when SiteBase is set, else the
// path with DocsPrefix in front.
func (o MarkdownOptions) DocsLink(path string) string {
	if o.SiteBase != "" {
		return o.SiteBase + SitePage(path)
	}
	return o.DocsPrefix + path
}

// SitePage is the docs site's page for a course path: "docs/01-claim.md#x"
// is "01-claim.html#x". Paths outside docs/ are returned unchanged.
func SitePage(path string) string {
	file, anchor, hasAnchor := strings.Cut(path, "#")
	if !strings.HasPrefix(file, "docs/") || !strings.HasSuffix(file, ".md") {
		return path
	}
	page := strings.TrimSuffix(strings.TrimPrefix(file, "docs/"), ".md") + ".html"
	if hasAnchor {
		page += "#" + anchor
	}
	return page
}

// NextKind says what a failing run's next step is.
type NextKind int

// The next steps after a run that did not pass.
const (
	NextNone         NextKind = iota // the run passed
	NextRerun                        // nothing failed, some cases were not exercised: run again
	NextInstallCC                    // only race cases were not exercised: install a C compiler
	NextFixBuild                     // fix the compile errors
	NextFixFirstCase                 // fix the first failing case (Case, when set, names it)
)

// Next is the one next thing to do after a run, as data: NextPlan decides
// it, String words it, and a formatter may name the case it means.
type Next struct {
	Kind NextKind
	// Case is the failing case to fix, when the formatter shows one
	// first; empty means "the first failing case".
	Case string
	Prog string // how the learner runs labctl, "go run ./cmd/labctl"
	Lab  int
	// HintsSeen and Hints say how many of the lab's hints the learner
	// has read, out of how many.
	HintsSeen, Hints int
	Seed             string // the run's seed, to replay it
}

// NextPlan decides the next step after rep.
func NextPlan(rep *report.Report, lab report.Lab, prog string, o MarkdownOptions) Next {
	n := Next{Prog: prog, Lab: lab.Number, HintsSeen: o.HintsSeen, Hints: o.Hints, Seed: rep.Seed}
	if n.Hints == 0 {
		n.Hints = 3
	}
	switch {
	case rep.Passed:
		n.Kind = NextNone
	case onlyNotExercised(rep) && rep.Race:
		n.Kind = NextRerun
	case onlyNotExercised(rep):
		n.Kind = NextInstallCC
	case rep.Build != nil:
		n.Kind = NextFixBuild
	default:
		n.Kind = NextFixFirstCase
	}
	return n
}

// String words the next step as one paragraph.
func (n Next) String() string {
	var b strings.Builder
	switch n.Kind {
	case NextNone:
		return ""
	case NextRerun:
		return fmt.Sprintf("Nothing fails, but some cases could not exercise their property on this run: run `%s check %d` again.", n.Prog, n.Lab)
	case NextInstallCC:
		return fmt.Sprintf("Nothing fails, but the cases that need the race detector were not exercised: install a C compiler (apt-get install gcc, or xcode-select --install on macOS) and run `%s check %d` again.", n.Prog, n.Lab)
	case NextFixBuild:
		fmt.Fprintf(&b, "Fix the compile errors, then run `%s check %d` again.", n.Prog, n.Lab)
	default:
		what := "the first failing case"
		if n.Case != "" {
			what = n.Case
		}
		fmt.Fprintf(&b, "Fix %s, then run `%s check %d` again.", what, n.Prog, n.Lab)
	}
	switch {
	case n.HintsSeen <= 0:
		fmt.Fprintf(&b, " Stuck? `%s hint %d` shows the first of %s hints.", n.Prog, n.Lab, numberWord(n.Hints))
	case n.HintsSeen < n.Hints:
		fmt.Fprintf(&b, " Stuck? `%s hint %d` shows hint %d of %d (you have seen %d).", n.Prog, n.Lab, n.HintsSeen+1, n.Hints, n.HintsSeen)
	default:
		fmt.Fprintf(&b, " You have seen all %s hints: reread the section linked above, compare the timeline with what your code does at each step, and `%s hint %d %d` shows the near-solution again.", numberWord(n.Hints), n.Prog, n.Lab, n.Hints)
	}
	if n.Seed != "" {
		fmt.Fprintf(&b, " Replay this exact run with `--seed %s`.", n.Seed)
	}
	return b.String()
}

// NextStep words the next step after rep (NextPlan's, as a paragraph).
func NextStep(rep *report.Report, lab report.Lab, prog string, o MarkdownOptions) string {
	return NextPlan(rep, lab, prog, o).String()
}

// onlyNotExercised reports whether every case that did not pass was not
// exercised (and at least one was).
func onlyNotExercised(rep *report.Report) bool {
	failed := rep.Failed()
	for _, c := range failed {
		if c.Status != report.StatusInconclusive {
			return false
		}
	}
	return len(failed) > 0 && rep.Build == nil
}

func numberWord(n int) string {
	if n >= 0 && n < len(numberWords) {
		return numberWords[n]
	}
	return fmt.Sprint(n)
}

var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}

// ShimPath rewrites a compile error's file name for the student: the
// pristine test shim lives in the kit's cache, so an error in it is shown
// at the lab's own test file, which holds the same code.
func ShimPath(lab report.Lab, file string) string {
	if filepath.IsAbs(file) && filepath.Base(file) == lab.TestFile {
		return "labs/" + lab.Dir + "/" + lab.TestFile
	}
	return file
}

// shimOutput applies ShimPath to every path in the compiler's output.
func shimOutput(lab report.Lab, out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		file, rest, ok := strings.Cut(l, ":")
		if ok && filepath.IsAbs(file) && filepath.Base(file) == lab.TestFile {
			lines[i] = ShimPath(lab, file) + ":" + rest
		}
	}
	return strings.Join(lines, "\n")
}

// InShim reports whether a build failure is in the pristine test file: the
// suite uses something the student's package does not define (yet).
func InShim(lab report.Lab, bf *report.BuildFailure) bool {
	for _, e := range bf.Errors {
		if filepath.Base(e.File) == lab.TestFile {
			return true
		}
	}
	return false
}

// BuildAdvice is the command that shows a build failure again: go vet,
// which compiles the test file too (go build would skip it and succeed
// when the error is in the suite's use of the package).
func BuildAdvice(lab report.Lab) string { return "go vet ./labs/" + lab.Dir + "/" }

// DiagnosisParagraph says, in Markdown, which catalogued mistake a run's
// failures look like, the evidence, and the misconception, hint and docs
// of the mistake's concept.
func DiagnosisParagraph(d *diagnosis.Match, lab report.Lab, o MarkdownOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**A known mistake:** %s\n\n", EscapeInline(sentenceCase(d.Sentence())))
	b.WriteString("**The evidence.** " + evidence(d, "`") + "\n\n")
	if concept := lab.Concept(d.Concept); concept.ID != "" {
		fmt.Fprintf(&b, "**Concept: %s.** The misconception behind it: *%s*\n\n", concept.Title, concept.Misconception)
		fmt.Fprintf(&b, "**Try this.** %s\n\n", concept.Hint)
		fmt.Fprintf(&b, "**Read.** [%s](%s)", concept.Docs, o.DocsLink(concept.Docs))
	}
	return strings.TrimRight(b.String(), "\n")
}

// Evidence says, in a sentence, how a run's failing cases compare with the
// diagnosed mistake's, each case name between quote marks (a backquote
// for Markdown, nothing for the terminal).
func Evidence(d *diagnosis.Match, quote string) string { return evidence(d, quote) }

func evidence(d *diagnosis.Match, quote string) string {
	list := func(names []string) string {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = quote + n + quote
		}
		return strings.Join(q, ", ")
	}
	var s string
	if d.Exact() {
		s = fmt.Sprintf("The cases that fail here (%s) are exactly the ones the catalogued mistake %s fails.", list(d.Shared), quote+d.Mistake+quote)
	} else {
		s = fmt.Sprintf("Of the cases that fail here, %s also fail with the catalogued mistake %s", list(d.Shared), quote+d.Mistake+quote)
		switch {
		case len(d.Extra) > 0 && len(d.Missing) > 0:
			s += fmt.Sprintf("; %s fail only here, and %s only there.", list(d.Extra), list(d.Missing))
		case len(d.Extra) > 0:
			s += fmt.Sprintf("; %s fail only here, so there may be a second bug.", list(d.Extra))
		default:
			s += fmt.Sprintf(", which also fails %s.", list(d.Missing))
		}
	}
	if len(d.Also) > 0 {
		s += fmt.Sprintf(" These cases cannot tell it from %s.", list(d.Also))
	}
	return s
}

// sentenceCase starts s with a capital letter.
func sentenceCase(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// Markdown renders the report as feedback for a student: the score, what
// fails and why it matters, the misconception behind it, the hint to try,
// the docs section to read, the timeline of each failing case, and what
// passes.
func Markdown(rep *report.Report, lab report.Lab, o MarkdownOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Lab %02d · %s: %d/%d\n\n", rep.Lab, rep.Title, rep.Score(), rep.Total)
	failed := rep.Failed()
	switch {
	case rep.Build != nil:
		b.WriteString("**The code does not compile**, so no case could run.\n\n")
	case rep.Passed:
		fmt.Fprintf(&b, "**Every case passes** (%d of %d).", len(rep.Cases), len(rep.Cases))
		if lab.NextLab != 0 {
			b.WriteString(" On to the next lab.")
		}
		b.WriteString("\n\n")
	case noneRan(rep) && len(rep.Problems) > 0:
		b.WriteString("**No case ran**: the problem below stopped the suite first.\n\n")
	default:
		fmt.Fprintf(&b, "**%d of %d cases fail.**\n\n", len(failed), len(rep.Cases))
		if rep.NotStarted {
			fmt.Fprintf(&b, "Every case fails with the starter's \"not implemented\" error: this lab has not been started yet. Read `labs/%s/README.md`, then replace the `TODO`s in `labs/%s/`. The cases below say what each behaviour must be.\n\n", lab.Dir, lab.Dir)
		}
	}
	var facts []string
	if rep.Target != "" {
		facts = append(facts, "graded: "+rep.Target)
	}
	if rep.Race {
		facts = append(facts, "race detector: on")
	} else {
		facts = append(facts, "race detector: off")
	}
	if rep.Seed != "" {
		facts = append(facts, "seed: "+rep.Seed)
	}
	if rep.Redis != "" {
		facts = append(facts, "Redis: "+rep.Redis)
	}
	facts = append(facts, fmt.Sprintf("took %.1fs", rep.Duration.Seconds()))
	b.WriteString("_" + strings.Join(facts, " · ") + "_\n\n")

	if rep.Build != nil {
		b.WriteString("## Compile errors\n\n")
		for _, e := range rep.Build.Errors {
			fmt.Fprintf(&b, "- %s: %s\n", codeSpan(fmt.Sprintf("%s:%d", ShimPath(lab, e.File), e.Line)), EscapeInline(e.Message))
		}
		if len(rep.Build.Errors) > 0 {
			b.WriteString("\n")
		}
		b.WriteString(fence(strings.Split(shimOutput(lab, rep.Build.Output), "\n")))
		if InShim(lab, rep.Build) {
			fmt.Fprintf(&b, "The kit's test file `labs/%s/%s` uses a name your package does not define (or defines differently): `labs/%s/README.md` lists what the lab must provide. ", lab.Dir, lab.TestFile, lab.Dir)
		}
		b.WriteString("Fix these first: run `" + BuildAdvice(lab) + "` to see them again.\n\n")
	}
	for _, p := range rep.Problems {
		first, rest, _ := strings.Cut(p, "\n")
		fmt.Fprintf(&b, "> **Problem:** %s\n\n", EscapeInline(first))
		if rest != "" {
			b.WriteString(fence(strings.Split(rest, "\n")))
		}
	}
	for _, n := range rep.Notes {
		// About the grading machine, not the submission: what its sandbox
		// could not enforce on this run.
		fmt.Fprintf(&b, "> **Grading note:** %s\n\n", EscapeInline(n))
	}

	if d := rep.Diagnosis; d != nil {
		b.WriteString("## What this looks like\n\n")
		b.WriteString(DiagnosisParagraph(d, lab, o) + "\n\n")
	}

	if rep.Build == nil && noneRan(rep) && len(rep.Problems) > 0 {
		b.WriteString("## Not run\n\n")
		for _, c := range rep.Cases {
			fmt.Fprintf(&b, "- `%s` (0/%d): %s\n", c.Name, c.Points, c.Explanation)
		}
		b.WriteString("\n")
	} else if rep.Build == nil && len(failed) > 0 {
		b.WriteString("## What fails\n\n")
		for _, c := range failed {
			concept := lab.Concept(c.Concept)
			fmt.Fprintf(&b, "### ✗ `%s` (0/%d, %s)\n\n", c.Name, c.Points, c.Status)
			fmt.Fprintf(&b, "**Why it matters.** %s\n\n", c.Explanation)
			if len(c.Output) > 0 {
				b.WriteString("**What happened.**\n\n")
				b.WriteString(fence(c.Output))
			} else if c.Status == report.StatusNotRun {
				b.WriteString("**What happened.** The suite never reached this case.\n\n")
			}
			if len(c.Timeline) > 0 {
				fmt.Fprintf(&b, "**Timeline** (%s):\n\n", o.TimelineLabel(c))
				if o.TimelineFigures {
					fmt.Fprintf(&b, "![Timeline of %s as a sequence diagram: one lane per party, and your code on the right](timelines/%s.svg)\n\n", c.Name, c.Name)
				}
				b.WriteString(fence(c.Timeline))
			}
			// A case that could not exercise its property, never ran, hung
			// or crashed is no misconception's evidence: none is named. A
			// case the diagnosis explains points to it.
			switch {
			case concept.ID == "" || !report.ShowsMisconception(c.Status):
			case rep.Explained(c):
				fmt.Fprintf(&b, "**Concept: %s.** This failure is part of the mistake described under \"What this looks like\".\n\n", concept.Title)
			default:
				fmt.Fprintf(&b, "**Concept: %s.** The misconception behind this failure: *%s*\n\n", concept.Title, concept.Misconception)
				fmt.Fprintf(&b, "**Try this.** %s\n\n", concept.Hint)
			}
			if concept.ID != "" {
				fmt.Fprintf(&b, "**Read.** [%s](%s)\n\n", concept.Docs, o.DocsLink(concept.Docs))
			}
		}
	}

	var passed []report.CaseResult
	for _, c := range rep.Cases {
		if c.Status == report.StatusPass {
			passed = append(passed, c)
		}
	}
	if len(passed) > 0 {
		b.WriteString("## What passes\n\n")
		for _, c := range passed {
			fmt.Fprintf(&b, "- ✓ `%s` (%d/%d): %s\n", c.Name, c.Earned, c.Points, c.Explanation)
		}
		b.WriteString("\n")
	}

	if !rep.Passed && !o.Instructor {
		b.WriteString("## Next step\n\n")
		prog := o.Prog
		if prog == "" {
			prog = "go run ./cmd/labctl"
		}
		b.WriteString(NextStep(rep, lab, prog, o))
		b.WriteString("\n")
	}
	return b.String()
}

// Fence wraps lines in a fenced code block whose fence is longer than any
// run of backticks in them, so that nothing in them renders: no heading,
// table, HTML or link, whatever a student printed.
func Fence(lines []string) string { return fence(lines) }

// EscapeInline makes one line of untrusted text (a student's output, a
// compiler message quoting their code) render as itself in the middle of
// a line of Markdown prose: the characters that open inline constructs
// (emphasis, code, links, HTML tags, entities, strikethrough, table cells)
// are backslash-escaped and line breaks become spaces, so the text cannot
// start a heading, a table or a block of its own either.
func EscapeInline(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
		case strings.ContainsRune("\\`*_[]<>&~|", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codeSpan is s as inline code, delimited by a backtick run longer than
// any in s.
func codeSpan(s string) string {
	s = strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
	d := "`"
	for strings.Contains(s, d) {
		d += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return d + s + d
}

// fence wraps lines in a fenced code block, choosing a fence the lines do not
// contain.
func fence(lines []string) string {
	f := "```"
	for strings.Contains(strings.Join(lines, "\n"), f) {
		f += "`"
	}
	return f + "text\n" + strings.Join(lines, "\n") + "\n" + f + "\n\n"
}

// noneRan reports whether no case of the report got to run.
func noneRan(rep *report.Report) bool {
	for _, c := range rep.Cases {
		if c.Status != report.StatusNotRun {
			return false
		}
	}
	return len(rep.Cases) > 0
}
