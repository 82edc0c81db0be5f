package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/internal/progress"
)

var listCmd = &command{
	name:  "list",
	usage: "",
	short: "show your progress across every lab, and what to do next",
	long: `
List prints every lab in course order with its status as of the last
"labctl check" of it (passed or failing with the score, or not started),
the labs still planned, and then your progress and the next step, or that
the course is done.`,
	setup: noFlags(runList),
}

func runList(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return usagef("list takes no arguments")
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	st, err := progress.Load(root)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAB\tTITLE\tSTATUS\tLAST CHECK")
	passed, built := 0, 0
	var earlier []int // labs that passed under earlier rules and fail now
	for _, l := range course.All() {
		if l.Planned {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\n", l.Dir, l.Title, "planned")
			continue
		}
		built++
		s, ok := st.Labs[l.Dir]
		status, when := "not started", ""
		if ok && !s.CheckedAt.IsZero() {
			when = s.CheckedAt.Local().Format("2006-01-02 15:04")
			if s.Passed {
				status = fmt.Sprintf("passed %d/%d", s.Score, s.Total)
				passed++
			} else {
				status = fmt.Sprintf("failing %d/%d", s.Score, s.Total)
				if pass, _ := progress.PassedUnderEarlierRules(s, l.Number); pass != nil {
					status += fmt.Sprintf(" (passed %s under rules level %d)", pass.CheckedAt.Local().Format("2006-01-02"), pass.Rules)
					earlier = append(earlier, l.Number)
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Dir, l.Title, status, when)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout)
	for _, n := range earlier {
		fmt.Fprintf(e.stdout, "Lab %02d passed under earlier rules; that pass stays on record. `%s check %d` says what changed since (docs/changelog.md).\n", n, e.prog(), n)
	}
	if len(earlier) > 0 {
		fmt.Fprintln(e.stdout)
	}
	if lab, done := st.FirstUnpassed(); done {
		fmt.Fprint(e.stdout, courseDone(e.prog()))
	} else {
		fmt.Fprintf(e.stdout, "%d of %d labs pass. Next: lab %02d, %s: `%s check %d`.\n", passed, built, lab.Number, lab.Title, e.prog(), lab.Number)
	}
	return nil
}
