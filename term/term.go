// Package term renders a lab's feedback for a terminal: one screen with the
// score, one line per case, the first failing case in full and the next
// step. The full feedback is the Markdown (labctl check --md); this is the
// short form a learner reads between edits.
package term

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/fourth-outcome/labkit/feedback"
	"github.com/fourth-outcome/labkit/grader"
	xterm "golang.org/x/term"
)

// Options tunes the terminal rendering.
type Options struct {
	// Color turns on ANSI colours and bold; see ColorFor.
	Color bool
	// Width is the column at which prose is wrapped; 0 means 80.
	Width int
	// Columns is the width of the terminal the feedback is written to:
	// lines of output (what happened, the timeline, compiler errors) longer
	// than it are cut, marked "…", so that none wraps. 0 means no terminal
	// (a pipe, a file): every line is kept whole.
	Columns int
	// Prog is how the learner runs labctl, "go run ./cmd/labctl" or
	// "labctl"; it appears in the commands the feedback suggests.
	Prog string
	// Markdown holds the hint level and the link settings shared with the
	// Markdown feedback (feedback.NextStep).
	Markdown feedback.MarkdownOptions
	// Next is the sentence shown after a passing run ("On to lab 02: ..."
	// or "The course is done ..."); empty for none.
	Next string
}

// Limits on how much of the first failing case is shown; check --md shows
// everything.
const (
	maxOutput   = 6
	minTimeline = 4
	maxBuild    = 8
)

// MaxLines is the screen the feedback is laid out to fit: the timeline of
// the first failing case gets what the rest leaves of it.
const MaxLines = 50

// ColorFor reports whether output to w should be coloured: only when w is a
// terminal, NO_COLOR is unset (https://no-color.org) and TERM is not
// "dumb".
func ColorFor(w io.Writer, getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	return IsTerminal(w)
}

// IsTerminal reports whether w is a terminal. A character device that is
// not a terminal, such as /dev/null, is not one.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && xterm.IsTerminal(int(f.Fd()))
}

// Width is the column at which prose written to w is wrapped: the
// terminal's width, never wider than MaxWidth, where prose gets hard to
// read, and 80 when w is not a terminal.
func Width(w io.Writer) int {
	cols := Columns(w)
	if cols <= 0 {
		return 80
	}
	return min(cols, MaxWidth)
}

// MaxWidth is the widest that Width wraps prose.
const MaxWidth = 120

// Columns is the number of columns of the terminal w (80 when its size is
// unknown), or 0 when w is not a terminal: output written to a pipe or a
// file is not cut to any width.
func Columns(w io.Writer) int {
	if !IsTerminal(w) {
		return 0
	}
	cols, _, err := xterm.GetSize(int(w.(*os.File).Fd()))
	if err != nil || cols <= 0 {
		return 80
	}
	return cols
}

type style struct{ on bool }

func (s style) wrap(code, text string) string {
	if !s.on {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}
func (s style) bold(t string) string  { return s.wrap("1", t) }
func (s style) dim(t string) string   { return s.wrap("2", t) }
func (s style) red(t string) string   { return s.wrap("31", t) }
func (s style) green(t string) string { return s.wrap("32", t) }
func (s style) cyan(t string) string  { return s.wrap("36", t) }

// Feedback renders rep as terminal feedback.
func Feedback(rep *grader.Report, lab grader.Lab, o Options) string {
	out := screen(rep, lab, o, false)
	if strings.Count(out, "\n") > MaxLines && !rep.Passed {
		// Too long for one screen: the passing cases become one line, so
		// that the score, the diagnosis, the first failure and the next
		// step still fit.
		out = screen(rep, lab, o, true)
	}
	return out
}

// screen renders rep; collapsePasses folds the passing cases into one line.
func screen(rep *grader.Report, lab grader.Lab, o Options, collapsePasses bool) string {
	if o.Width <= 0 {
		o.Width = 80
	}
	if o.Prog == "" {
		o.Prog = "labctl"
	}
	s := style{o.Color}
	var b strings.Builder
	failed := rep.Failed()

	score := fmt.Sprintf("%d/%d", rep.Score(), rep.Total)
	if rep.Passed {
		score = s.green(score)
	} else {
		score = s.red(score)
	}
	fmt.Fprintf(&b, "%s  %s\n", s.bold(fmt.Sprintf("Lab %02d · %s", rep.Lab, rep.Title)), score)
	facts := []string{}
	if rep.Race {
		facts = append(facts, "race detector on")
	} else {
		facts = append(facts, "race detector off")
	}
	if rep.Seed != "" {
		facts = append(facts, "seed "+rep.Seed)
	}
	if rep.Redis != "" {
		facts = append(facts, "Redis "+rep.Redis)
	}
	facts = append(facts, fmt.Sprintf("took %.1fs", rep.Duration.Seconds()))
	b.WriteString(s.dim(strings.Join(facts, " · ")) + "\n\n")

	if rep.Build != nil {
		b.WriteString(s.red("The code does not compile") + ", so no case could run.\n\n")
		lines := strings.Split(rep.Build.Output, "\n")
		for i := range lines {
			for _, e := range rep.Build.Errors {
				if strings.HasPrefix(lines[i], e.File+":") {
					lines[i] = feedback.ShimPath(lab, e.File) + strings.TrimPrefix(lines[i], e.File)
				}
			}
		}
		writeBlock(&b, lines, maxBuild, o, s, lab.Number)
		if feedback.InShim(lab, rep.Build) {
			b.WriteString(wrap(fmt.Sprintf("The kit's test file labs/%s/%s uses a name your package does not define (or defines differently); labs/%s/README.md lists what the lab must provide.", lab.Dir, lab.TestFile, lab.Dir), "", o.Width))
		}
		b.WriteString(wrap("Run `"+feedback.BuildAdvice(lab)+"` to see every error.", "", o.Width))
		b.WriteString("\n")
		writeNext(&b, rep, lab, o, s, "")
		return b.String()
	}

	nameWidth := 0
	for _, c := range rep.Cases {
		nameWidth = max(nameWidth, utf8.RuneCountInString(c.Name))
	}
	passes := 0
	for _, c := range rep.Cases {
		mark, status := s.green("✓"), ""
		if c.Status != grader.StatusPass {
			mark, status = s.red("✗"), "  "+string(c.Status)
		} else if collapsePasses {
			passes++
			continue
		}
		pts := fmt.Sprintf("%d/%d", c.Earned, c.Points)
		fmt.Fprintf(&b, "  %s %-*s %6s%s\n", mark, nameWidth, c.Name, pts, status)
	}
	if passes > 0 {
		fmt.Fprintf(&b, "  %s %s\n", s.green("✓"), s.dim(fmt.Sprintf("and %d more cases pass (`%s check %d --md` lists them)", passes, o.Prog, lab.Number)))
	}
	b.WriteString("\n")
	for _, p := range rep.Problems {
		first, _, _ := strings.Cut(p, "\n")
		b.WriteString(wrap(s.red("Problem: ")+first, "", o.Width))
	}
	if len(rep.Problems) > 0 {
		b.WriteString("\n")
	}

	if rep.Passed {
		fmt.Fprintf(&b, "%s (%d of %d).\n", s.green("Every case passes"), len(rep.Cases), len(rep.Cases))
		if o.Next != "" {
			b.WriteString("\n" + wrap(s.bold("Next: ")+o.Next, "", o.Width))
		}
		return b.String()
	}
	if rep.NotStarted {
		b.WriteString(wrap(fmt.Sprintf("This lab has not been started yet: every case fails with the starter's \"not implemented\". Read labs/%s/README.md, then replace the TODOs in labs/%s/.", lab.Dir, lab.Dir), "", o.Width))
		b.WriteString("\n")
	}

	var first *grader.CaseResult
	for i := range failed {
		// The first case that ran and failed; a case that never ran only
		// when no other failed.
		if first == nil || (first.Status == grader.StatusNotRun && failed[i].Status != grader.StatusNotRun) {
			first = &failed[i]
		}
	}

	// The diagnosis names its mistake and the evidence; its concept's
	// misconception, hint and docs are shown once: here when they are not
	// the first failing case's own, below with that case when they are.
	diagConcept := ""
	if d := rep.Diagnosis; d != nil {
		b.WriteString(wrap(s.bold("This looks like a known mistake: ")+d.Sentence(), "", o.Width))
		b.WriteString(wrap(s.bold("Evidence. ")+feedback.Evidence(d, ""), "  ", o.Width))
		if concept := lab.Concept(d.Concept); concept.ID != "" && (first == nil || first.Concept != concept.ID) {
			diagConcept = concept.ID
			b.WriteString(wrap(s.bold("Misconception. ")+concept.Misconception, "  ", o.Width))
			b.WriteString(wrap(s.bold("Try this. ")+concept.Hint, "  ", o.Width))
			b.WriteString(wrap(s.bold("Read. ")+s.cyan(o.Markdown.DocsLink(concept.Docs)), "  ", o.Width))
		}
		b.WriteString("\n")
	}
	if first == nil {
		writeNext(&b, rep, lab, o, s, "")
		return b.String()
	}
	c := *first
	fmt.Fprintf(&b, "%s %s %s\n", s.red("✗"), s.bold(c.Name), s.dim(fmt.Sprintf("(0/%d, %s)", c.Points, c.Status)))
	b.WriteString(wrap(s.bold("Why it matters. ")+c.Explanation, "  ", o.Width))
	if len(c.Output) > 0 {
		b.WriteString("  " + s.bold("What happened.") + "\n")
		writeBlock(&b, c.Output, maxOutput, o, s, lab.Number)
	} else if c.Status == grader.StatusNotRun {
		b.WriteString(wrap(s.bold("What happened. ")+"The suite never reached this case.", "  ", o.Width))
	}
	const timelineMark = "\x00timeline\x00\n"
	if len(c.Timeline) > 0 {
		b.WriteString("  " + s.bold("Timeline") + " (" + o.Markdown.TimelineLabel(c) + "):\n")
		b.WriteString(timelineMark)
	}
	if concept := lab.Concept(c.Concept); concept.ID != "" {
		switch {
		case !grader.ShowsMisconception(c.Status): // not evidence of a belief: no misconception to name
			b.WriteString(wrap(s.bold("Read. ")+s.cyan(o.Markdown.DocsLink(concept.Docs)), "  ", o.Width))
		case rep.Explained(c) && diagConcept != "": // the diagnosis above names its misconception
		default:
			b.WriteString(wrap(s.bold("Misconception. ")+concept.Misconception, "  ", o.Width))
			b.WriteString(wrap(s.bold("Try this. ")+concept.Hint, "  ", o.Width))
			b.WriteString(wrap(s.bold("Read. ")+s.cyan(o.Markdown.DocsLink(concept.Docs)), "  ", o.Width))
		}
	}
	if more := len(failed) - 1; more > 0 {
		b.WriteString(s.dim(fmt.Sprintf("  (%d more failing: `%s check %d --md` shows every case in full)", more, o.Prog, lab.Number)) + "\n")
	}
	b.WriteString("\n")
	writeNext(&b, rep, lab, o, s, c.Name)
	out := b.String()
	if len(c.Timeline) > 0 {
		// The timeline gets the lines the rest leaves of the screen.
		used := strings.Count(out, "\n") - 1
		var tl strings.Builder
		writeBlock(&tl, c.Timeline, max(minTimeline, MaxLines-used-1), o, s, lab.Number)
		out = strings.Replace(out, timelineMark, tl.String(), 1)
	}
	return out
}

// writeNext writes the one next thing to do after a failing run.
func writeNext(b *strings.Builder, rep *grader.Report, lab grader.Lab, o Options, s style, firstCase string) {
	plan := feedback.NextPlan(rep, lab, o.Prog, o.Markdown)
	plan.Case = firstCase
	next := plan.String()
	b.WriteString(wrap(s.bold("Next: ")+next, "", o.Width))
}

// writeBlock writes up to limit lines indented, cut to the terminal's
// columns (whole when there is no terminal), and says how many were left
// out.
func writeBlock(b *strings.Builder, lines []string, limit int, o Options, s style, labNumber int) {
	for i, l := range lines {
		if i == limit && len(lines) > limit+1 {
			b.WriteString(s.dim(fmt.Sprintf("    … %d more lines (%s check %d --md shows them all)", len(lines)-limit, o.Prog, labNumber)) + "\n")
			break
		}
		if i > limit {
			break
		}
		if o.Columns > 0 {
			l = cut(l, max(o.Columns-4, 20))
		}
		b.WriteString("    " + l + "\n")
	}
}

// cut shortens a line to width runes, marking the cut.
func cut(l string, width int) string {
	if utf8.RuneCountInString(l) <= width {
		return l
	}
	r := []rune(l)
	return string(r[:width-1]) + "…"
}

// wrap fills text to width, every line starting with indent. Width counts
// visible characters, not the escape sequences of colours.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line, n := indent, utf8.RuneCountInString(indent)
	for _, w := range strings.Fields(text) {
		wl := visibleLen(w)
		if n > utf8.RuneCountInString(indent) && n+1+wl > width {
			b.WriteString(line + "\n")
			line, n = indent, utf8.RuneCountInString(indent)
		}
		if n > utf8.RuneCountInString(indent) {
			line += " "
			n++
		}
		line += w
		n += wl
	}
	b.WriteString(line + "\n")
	return b.String()
}

func visibleLen(s string) int {
	n, esc := 0, false
	for _, r := range s {
		switch {
		case r == '\x1b':
			esc = true
		case esc && r == 'm':
			esc = false
		case !esc:
			n++
		}
	}
	return n
}
