package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/fourth-outcome/labkit/course"
)

var listCmd = &command{
	name:  "list",
	usage: "",
	short: "list the labs with their status from your last checks",
	long: `
List prints every lab in course order with its status as of the last
"labctl check" of it: passed, failing (with the score), or not started.`,
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
	st, err := loadState(root)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAB\tTITLE\tSTATUS\tLAST CHECK")
	for _, l := range course.Built() {
		s, ok := st.Labs[l.Dir]
		status, when := "not started", ""
		if ok && !s.CheckedAt.IsZero() {
			when = s.CheckedAt.Local().Format("2006-01-02 15:04")
			if s.Passed {
				status = fmt.Sprintf("passed %d/%d", s.Score, s.Total)
			} else {
				status = fmt.Sprintf("failing %d/%d", s.Score, s.Total)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Dir, l.Title, status, when)
	}
	return tw.Flush()
}
