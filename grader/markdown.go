package grader

import (
	"fmt"
	"strings"
)

// MarkdownOptions tunes feedback rendering.
type MarkdownOptions struct {
	// DocsPrefix is put before docs paths in links ("../" when the feedback
	// file lives one directory below the kit root). Empty leaves them
	// relative to the kit root.
	DocsPrefix string
	// Instructor feedback omits the "run labctl hint" advice.
	Instructor bool
}

// Markdown renders the report as feedback for a student: the score, what
// fails and why it matters, the misconception behind it, the hint to try,
// the docs section to read, the timeline of each failing case, and what
// passes.
func Markdown(rep *Report, lab Lab, o MarkdownOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Lab %02d · %s: %d/%d\n\n", rep.Lab, rep.Title, rep.Score, rep.Total)
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
		if rep.Score == 0 && len(failed) == len(rep.Cases) && allMention(failed, notImplemented) {
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
	facts = append(facts, fmt.Sprintf("took %.1fs", rep.Duration.Seconds()))
	b.WriteString("_" + strings.Join(facts, " · ") + "_\n\n")

	if rep.Build != nil {
		b.WriteString("## Compile errors\n\n")
		for _, e := range rep.Build.Errors {
			fmt.Fprintf(&b, "- `%s:%d`: %s\n", e.File, e.Line, e.Message)
		}
		if len(rep.Build.Errors) > 0 {
			b.WriteString("\n")
		}
		b.WriteString(fence(strings.Split(rep.Build.Output, "\n")))
		b.WriteString("Fix these first: run `go build ./labs/" + lab.Dir + "/` to see them again.\n\n")
	}
	for _, p := range rep.Problems {
		first, rest, _ := strings.Cut(p, "\n")
		fmt.Fprintf(&b, "> **Problem:** %s\n\n", first)
		if rest != "" {
			b.WriteString(fence(strings.Split(rest, "\n")))
		}
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
			} else if c.Status == StatusNotRun {
				b.WriteString("**What happened.** The suite never reached this case: an earlier crash or timeout stopped the run.\n\n")
			}
			if len(c.Timeline) > 0 {
				b.WriteString("**Timeline** (virtual time):\n\n")
				b.WriteString(fence(c.Timeline))
			}
			if concept.ID != "" {
				fmt.Fprintf(&b, "**Concept: %s.** The misconception behind this failure: *%s*\n\n", concept.Title, concept.Misconception)
				fmt.Fprintf(&b, "**Try this.** %s\n\n", concept.Hint)
				fmt.Fprintf(&b, "**Read.** [%s](%s%s)\n\n", concept.Docs, o.DocsPrefix, concept.Docs)
			}
		}
	}

	var passed []CaseResult
	for _, c := range rep.Cases {
		if c.Status == StatusPass {
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
		fmt.Fprintf(&b, "Fix the first failing case, then run `go run ./cmd/labctl check %d` again. Stuck? `go run ./cmd/labctl hint %d` shows the first of three hints.", lab.Number, lab.Number)
		if rep.Seed != "" {
			fmt.Fprintf(&b, " Replay this exact run with `--seed %s`.", rep.Seed)
		}
		b.WriteString("\n")
	}
	return b.String()
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

// allMention reports whether every case's output contains one of words.
func allMention(cases []CaseResult, words []string) bool {
	for _, c := range cases {
		text := strings.ToLower(strings.Join(c.Output, "\n"))
		found := false
		for _, w := range words {
			if strings.Contains(text, w) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return len(cases) > 0
}

// noneRan reports whether no case of the report got to run.
func noneRan(rep *Report) bool {
	for _, c := range rep.Cases {
		if c.Status != StatusNotRun {
			return false
		}
	}
	return len(rep.Cases) > 0
}
