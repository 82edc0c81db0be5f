package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/internal/progress"
	"github.com/fourth-outcome/labkit/internal/starter"
)

type resetOpts struct{ yes bool }

var resetCmd = &command{
	name:  "reset",
	usage: "[--yes] LAB",
	short: "restore a lab's starter (your files are backed up first) and its hint level",
	long: `
Reset puts labs/NN-name/ back to the kit's starter, as a fresh clone has it,
and forgets the lab's hint level and last result. It asks first (--yes does
not), and copies your files to .labkit/backup/NN-name-TIME/ before touching
anything, so nothing is lost.

The starter comes from the kit's git history (the version you last pulled),
so reset needs a git clone of the kit.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &resetOpts{}
		fs.BoolVar(&o.yes, "yes", false, "do not ask")
		return func(ctx context.Context, e *env, args []string) error { return runReset(ctx, e, o, args) }
	},
}

func runReset(ctx context.Context, e *env, o *resetOpts, args []string) error {
	if len(args) != 1 {
		return usagef("reset: want one LAB, e.g. %s reset 1", e.prog())
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	lab, err := resolveLab(args[0])
	if err != nil {
		return err
	}
	ref, err := starter.Ref(root)
	if err != nil {
		return usagef("reset: %v", err)
	}
	files, err := starter.Files(root, ref, lab)
	if err != nil || len(files) == 0 {
		return usagef("reset: the kit's history has no starter for labs/%s at %s", lab.Dir, ref)
	}
	dir := filepath.Join(root, "labs", lab.Dir)
	backup := filepath.Join(root, ".labkit", "backup", lab.Dir+"-"+time.Now().Format("20060102-150405"))
	if !o.yes && !confirm(bufio.NewReader(input(ctx)), e.stdout, fmt.Sprintf("Reset labs/%s to its starter? Your files are copied to %s first.", lab.Dir, rel(root, backup))) {
		fmt.Fprintln(e.stdout, "Nothing changed.")
		return nil
	}
	if err := copyTree(dir, backup); err != nil {
		return fmt.Errorf("reset: back up labs/%s: %w (nothing changed)", lab.Dir, err)
	}
	// Go files the starter does not have would still be compiled into
	// the package: they go (they are in the backup).
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		p := "labs/" + lab.Dir + "/" + en.Name()
		if _, ok := files[p]; !ok && strings.HasSuffix(en.Name(), ".go") {
			if err := os.Remove(filepath.Join(dir, en.Name())); err != nil {
				return fmt.Errorf("reset: %w", err)
			}
		}
	}
	for p := range files {
		body, err := gitShow(root, ref, p)
		if err != nil {
			return fmt.Errorf("reset: %w", err)
		}
		dst := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("reset: %w", err)
		}
		if err := os.WriteFile(dst, body, 0o644); err != nil {
			return fmt.Errorf("reset: %w", err)
		}
	}
	// The starter is back: from here on, what cannot be done is said
	// after what was, and the reset stands.
	st, err := progress.Load(root)
	if err == nil {
		delete(st.Labs, lab.Dir)
		err = progress.Save(root, st)
	}
	if err != nil {
		fmt.Fprintf(e.stdout, "labs/%s is the starter again (your files: %s). Next: `%s check %d`.\n", lab.Dir, rel(root, backup), e.prog(), lab.Number)
		e.warnNotSaved(fmt.Sprintf("that lab %02d starts over", lab.Number), err, fmt.Sprintf("`%s list` still shows its last result, and hints go on from the level you had reached", e.prog()))
		return nil
	}
	fmt.Fprintf(e.stdout, "labs/%s is the starter again (your files: %s); hints start at level 1. Next: `%s check %d`.\n", lab.Dir, rel(root, backup), e.prog(), lab.Number)
	return nil
}

// gitShow returns a file's contents at ref.
func gitShow(root, ref, path string) ([]byte, error) {
	cmd := exec.Command("git", "show", ref+":"+path)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git show %s:%s: %w", ref, path, err)
	}
	return out, nil
}

// rel is path relative to root, for messages.
func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

// copyTree copies the regular files under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, r)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
