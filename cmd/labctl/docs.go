package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/fourth-outcome/labkit/render"
)

type docsOpts struct {
	out string
}

var docsCmd = &command{
	name:  "docs",
	usage: "[--out DIR]",
	short: "render the course (docs/*.md) to HTML pages you can open in a browser",
	long: `
Docs renders every Markdown file in docs/ to an HTML page in DIR (default
.labkit/docs), rewriting links between chapters to point at the HTML pages.
Open DIR/README.html to read the course from the start.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &docsOpts{}
		fs.StringVar(&o.out, "out", "", "directory for the HTML pages (default .labkit/docs in the kit)")
		return func(ctx context.Context, e *env, args []string) error { return runDocs(ctx, e, o, args) }
	},
}

var mdLink = regexp.MustCompile(`\]\(([^)#:\s]+)\.md(#[^)\s]*)?\)`)

func runDocs(ctx context.Context, e *env, o *docsOpts, args []string) error {
	if len(args) > 0 {
		return usagef("docs takes no arguments (use --out DIR)")
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	out := o.out
	if out == "" {
		out = filepath.Join(root, ".labkit", "docs")
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(files) == 0 {
		return usagef("no Markdown files in %s", filepath.Join(root, "docs"))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return usagef("--out: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		text := mdLink.ReplaceAllString(string(src), "]($1.html$2)")
		title := strings.TrimSuffix(filepath.Base(f), ".md")
		if line, _, _ := strings.Cut(text, "\n"); strings.HasPrefix(line, "# ") {
			title = strings.TrimPrefix(line, "# ")
		}
		page, err := render.Page(title, text)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, strings.TrimSuffix(filepath.Base(f), ".md")+".html")
		if err := os.WriteFile(dst, page, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "rendered %d pages to %s (start at %s)\n", len(files), out, filepath.Join(out, "README.html"))
	return nil
}
