package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/grade"
)

var gradebookCmd = &command{
	name:  "gradebook",
	usage: "merge --out OUT SHARD_OUT...",
	short: "join the --out folders of labctl grade --shard into one (instructors)",
	long: `
Gradebook merge joins the output folders of a class graded in shards
(labctl grade --shard I/N on N machines, or a CI matrix) into OUT: every
student's folder is copied, the course pages of the first shard too, and
gradebook.csv, cases.csv, summary.md and summary.html are written from the
students' report.json, byte for byte what one machine grading the whole
class would have written (timings live only in report.json and
results.json). The shards must have been graded with the same kit and
settings (their class.json); a student in two shards is refused.`,
	setup: func(fs *flag.FlagSet) runFunc {
		out := fs.String("out", "", "the merged output folder")
		return func(ctx context.Context, e *env, args []string) error { return runGradebook(ctx, e, *out, args) }
	},
}

func runGradebook(_ context.Context, e *env, outFlag string, args []string) error {
	if len(args) == 0 || args[0] != "merge" {
		return usagef("gradebook: want merge --out OUT SHARD_OUT..., e.g. %s gradebook merge --out graded shard-1 shard-2", e.prog())
	}
	fs := flag.NewFlagSet("gradebook merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", outFlag, "the merged output folder")
	if err := fs.Parse(args[1:]); err != nil {
		return usagef("gradebook merge: %v", err)
	}
	shards := fs.Args()
	if *out == "" || len(shards) == 0 {
		return usagef("gradebook merge: want --out OUT and at least one SHARD_OUT")
	}
	var courseLabs []grader.Lab
	for _, l := range course.Built() {
		courseLabs = append(courseLabs, l.Lab)
	}
	var cf gradebook.ClassFile
	var o gradebook.Options
	seen := map[string]string{}
	for i, sh := range shards {
		c, ok, err := gradebook.ReadClassFile(sh)
		if err != nil {
			return usagef("gradebook merge: %v", err)
		}
		if !ok {
			return usagef("gradebook merge: %s has no %s (is it the --out of labctl grade?)", sh, gradebook.ClassFileName)
		}
		so, err := c.Options(courseLabs)
		if err != nil {
			return usagef("gradebook merge: %s: %v", sh, err)
		}
		if i == 0 {
			cf, o = c, so
		} else if c.Kit != cf.Kit || c.DocsBase != cf.DocsBase || !c.Late.Deadline.Equal(cf.Late.Deadline) || fmt.Sprint(c.Weights) != fmt.Sprint(cf.Weights) {
			return usagef("gradebook merge: %s: %v (kit %s, not %s)", sh, errShardsDisagree, c.Kit, cf.Kit)
		} else {
			o.Labs = gradebook.UnionLabs(o.Labs, so.Labs)
		}
		students, err := gradebook.LoadStudents(sh, courseLabs)
		if err != nil {
			return fmt.Errorf("gradebook merge: %w", err)
		}
		for _, st := range students {
			dir := gradebook.Dir(st.Name)
			if other, dup := seen[dir]; dup {
				return usagef("gradebook merge: %s is in both %s and %s", st.Name, other, sh)
			}
			seen[dir] = sh
			if err := os.RemoveAll(filepath.Join(*out, dir)); err != nil {
				return err
			}
			if err := os.CopyFS(filepath.Join(*out, dir), os.DirFS(filepath.Join(sh, dir))); err != nil {
				return fmt.Errorf("gradebook merge: copy %s: %w", st.Name, err)
			}
		}
		if docs := filepath.Join(sh, "docs"); i == 0 {
			if _, err := os.Stat(docs); err == nil {
				os.RemoveAll(filepath.Join(*out, "docs"))
				if err := os.CopyFS(filepath.Join(*out, "docs"), os.DirFS(docs)); err != nil {
					return fmt.Errorf("gradebook merge: copy the course pages: %w", err)
				}
			}
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return usagef("gradebook merge: --out: %v", err)
	}
	if err := grade.WriteClassFiles(*out, o); err != nil {
		return fmt.Errorf("gradebook merge: %w", err)
	}
	fmt.Fprintf(e.stdout, "merged %d students from %d shard(s) into %s\n", len(seen), len(shards), filepath.Join(*out, "gradebook.csv"))
	return nil
}

// errShardsDisagree is a merge of shards graded with other settings.
var errShardsDisagree = fmt.Errorf("the shards were graded with different settings")
