package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fourth-outcome/labkit/internal/progress"
)

var hintCmd = &command{
	name:  "hint",
	usage: "LAB [LEVEL]",
	short: "show the next hint for a lab, one level at a time",
	long: `
Hint shows one hint for LAB. Each lab has three levels: 1 a nudge, 2 an
approach, 3 a near-solution. Without LEVEL you get the level after the last
one you saw (starting at 1); with LEVEL you get that one.`,
	setup: noFlags(runHint),
}

func runHint(ctx context.Context, e *env, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return usagef("hint: want LAB [LEVEL], e.g. %s hint 1", e.prog())
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	lab, err := resolveLab(args[0])
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(root, "labs", lab.Dir, "hints", "*.md"))
	if err != nil || len(files) == 0 {
		return usagef("lab %s has no hints (labs/%s/hints/ is empty or missing)", lab.Dir, lab.Dir)
	}
	sort.Strings(files)
	st, err := progress.Load(root)
	if err != nil {
		return err
	}
	ls := st.Labs[lab.Dir]
	level := min(ls.HintLevel+1, len(files))
	if len(args) == 2 {
		level, err = strconv.Atoi(args[1])
		if err != nil || level < 1 || level > len(files) {
			return usagef("hint: level %q: want a number from 1 to %d", args[1], len(files))
		}
	}
	text, err := os.ReadFile(files[level-1])
	if err != nil {
		return usagef("hint: %v", err)
	}
	fmt.Fprintf(e.stdout, "Lab %02d %s, hint %d of %d\n\n%s\n", lab.Number, lab.Slug, level, len(files), strings.TrimSpace(string(text)))
	if level < len(files) {
		fmt.Fprintf(e.stdout, "\n(Still stuck? `%s hint %d` shows level %d.)\n", e.prog(), lab.Number, level+1)
	}
	if level > ls.HintLevel {
		ls.HintLevel = level
		st.Labs[lab.Dir] = ls
		if err := progress.Save(root, st); err != nil {
			e.warnNotSaved(fmt.Sprintf("that you saw hint %d", level), err, fmt.Sprintf("`%s hint %d` shows this hint again, and check's next step offers it", e.prog(), lab.Number))
		}
	}
	return nil
}
