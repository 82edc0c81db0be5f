package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fourth-outcome/labkit/internal/progress"
)

var solutionCmd = &command{
	name:  "solution",
	usage: "LAB",
	short: "show a passed lab's reference solution and how your code differs",
	long: `
Solution prints the reference solution of LAB (solutions/NN-slug in the
full kit), then the difference from your code in labs/NN-slug, file by
file. It opens once LAB has passed "labctl check", now or under earlier
rules: read before, the reference would spoil the lab. A student release
has no solutions/, so it has nothing to show.`,
	setup: noFlags(runSolution),
}

func runSolution(ctx context.Context, e *env, args []string) error {
	if len(args) != 1 {
		return usagef("solution: want one LAB, e.g. %s solution 1", e.prog())
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	lab, err := resolveLab(args[0])
	if err != nil {
		return err
	}
	ref := filepath.Join(root, "solutions", lab.Dir)
	if _, err := os.Stat(ref); errors.Is(err, fs.ErrNotExist) {
		return usagef("solution: this copy of the kit has no solutions/ (a student release): the reference of lab %02d is not in it", lab.Number)
	}
	st, err := progress.Load(root)
	if err != nil {
		return err
	}
	if s := st.Labs[lab.Dir]; !s.Passed && s.LastPass == nil {
		return usagef("solution: lab %02d has not passed yet, and its reference would spoil it: it opens once `%s check %d` passes (stuck? `%s hint %d`)", lab.Number, e.prog(), lab.Number, e.prog(), lab.Number)
	}
	files, err := referenceFiles(ref)
	if err != nil {
		return fmt.Errorf("solution: %w", err)
	}
	fmt.Fprintf(e.stdout, "Lab %02d %s: the reference solution (solutions/%s), then how your code differs.\n", lab.Number, lab.Title, lab.Dir)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(ref, f))
		if err != nil {
			return fmt.Errorf("solution: %w", err)
		}
		fmt.Fprintf(e.stdout, "\n── solutions/%s/%s ──\n%s", lab.Dir, f, data)
		if !bytes.HasSuffix(data, []byte("\n")) {
			fmt.Fprintln(e.stdout)
		}
	}
	fmt.Fprintf(e.stdout, "\n── your code against the reference (- yours, + the reference) ──\n")
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Fprintln(e.stdout, "(no git on this machine to compute the difference; compare the files above with labs/"+lab.Dir+")")
		return nil
	}
	same := true
	for _, f := range files {
		mine := filepath.Join("labs", lab.Dir, f)
		if _, err := os.Stat(filepath.Join(root, mine)); err != nil {
			mine = os.DevNull
		}
		cmd := exec.CommandContext(ctx, "git", "diff", "--no-index", "--no-color", "--", mine, filepath.Join("solutions", lab.Dir, f))
		cmd.Dir = root
		out, err := cmd.Output()
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit) && exit.ExitCode() == 1:
			same = false
			e.stdout.Write(out)
		default:
			return fmt.Errorf("solution: git diff %s: %w", f, err)
		}
	}
	if same {
		fmt.Fprintln(e.stdout, "(none: your files are the reference's)")
	}
	return nil
}

// referenceFiles lists the reference's Go files, tests excluded, sorted.
func referenceFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range entries {
		if n := d.Name(); d.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}
