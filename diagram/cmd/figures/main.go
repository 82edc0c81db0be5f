// Command figures draws the course's figures: each source in docs/figures
// (NAME.seq, NAME.chart, NAME.tree) becomes NAME.svg beside it, committed
// so that GitHub shows it. It then checks the figures against the
// chapters: every figure is referenced by a chapter as
// ![TITLE](figures/NAME.svg) with the figure's own title as the alt text,
// every reference has a source, and every number a figure asserts
// ("assert max(backlog) = 12,000") is shown by the figure and stated in
// the prose of the section around the reference. With -check it writes
// nothing and fails if a drawing is not the one its source gives.
//
//	go run ./diagram/cmd/figures            # redraw docs/figures/*.svg, then check
//	go run ./diagram/cmd/figures -check     # check only (exit 1 on a problem)
//	go generate ./diagram/                  # the same as the first
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/fourth-outcome/labkit/diagram"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, errFailed):
		os.Exit(1)
	case errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintf(os.Stderr, "figures: %v\n", err)
		os.Exit(2)
	}
}

// errFailed means the check found problems, already printed.
var errFailed = errors.New("figures: check failed")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("figures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	docs := fs.String("docs", "docs", "the course's docs directory, holding the chapters and figures/")
	check := fs.Bool("check", false, "write nothing; fail if a drawing is stale")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (want -docs DIR and -check)", fs.Args())
	}
	figs, err := load(*docs)
	if err != nil {
		return err
	}
	var problems []error
	wrote := 0
	for _, f := range figs {
		if f.err != nil {
			problems = append(problems, f.err)
			continue
		}
		old, _ := os.ReadFile(f.svgPath)
		if string(old) == f.svg {
			continue
		}
		if *check {
			problems = append(problems, fmt.Errorf("%s: %w (go generate ./diagram/ redraws it)", f.svgPath, ErrStale))
			continue
		}
		if err := os.WriteFile(f.svgPath, []byte(f.svg), 0o644); err != nil {
			return fmt.Errorf("figures: %w", err)
		}
		wrote++
	}
	refs, errs := checkDocs(*docs, figs)
	problems = append(problems, errs...)
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	if len(problems) > 0 {
		return errFailed
	}
	numbers := 0
	for _, f := range figs {
		numbers += len(diagram.Info(f.fig).Asserts)
	}
	fmt.Fprintf(stdout, "%d figures (%d redrawn), %d references, %d numbers shown by the figures and stated in the prose\n", len(figs), wrote, refs, numbers)
	return nil
}

// Errors of the check, each wrapped with where.
var (
	// ErrStale is a drawing that is not what its source gives.
	ErrStale = errors.New("drawing out of date")
	// ErrOrphan is a drawing with no source, or a figure no chapter shows.
	ErrOrphan = errors.New("figure not referenced")
	// ErrReference is a reference to a figure that does not exist, or
	// whose alt text is not the figure's title.
	ErrReference = errors.New("bad figure reference")
	// ErrProse is a number a figure asserts that the prose near it does
	// not state.
	ErrProse = errors.New("number missing from the prose")
)

// figure is one source of docs/figures, parsed and drawn.
type figure struct {
	name    string // NAME
	source  string // docs/figures/NAME.seq
	svgPath string // docs/figures/NAME.svg
	fig     diagram.Figure
	svg     string
	err     error // the source does not parse, draw or check
}

// load parses and draws every source of dir/figures, in name order.
func load(docs string) ([]figure, error) {
	dir := filepath.Join(docs, "figures")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("figures: %w", err)
	}
	var figs []figure
	svgs := map[string]bool{}
	for _, e := range entries {
		name, ext := strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())), filepath.Ext(e.Name())
		if ext == ".svg" {
			svgs[name] = true
		}
		known := false
		for _, k := range diagram.Extensions {
			known = known || k == ext
		}
		if !known || e.IsDir() {
			continue
		}
		f := figure{name: name, source: filepath.Join(dir, e.Name()), svgPath: filepath.Join(dir, name+".svg")}
		text, err := os.ReadFile(f.source)
		if err != nil {
			return nil, fmt.Errorf("figures: %w", err)
		}
		f.fig, f.err = diagram.Parse(f.source, string(text))
		if f.err == nil {
			f.svg, f.err = f.fig.SVG()
		}
		if f.err == nil {
			if err := diagram.CheckAll(f.fig); err != nil {
				f.err = fmt.Errorf("%s: %w", f.source, err)
			} else if len(diagram.Info(f.fig).Asserts) == 0 {
				f.err = fmt.Errorf("%s: %w: it asserts no number (assert QUERY = NUMBER), so nothing ties it to the prose", f.source, diagram.ErrAssert)
			}
		}
		figs = append(figs, f)
	}
	sources := map[string]bool{}
	for _, f := range figs {
		if sources[f.name] {
			return nil, fmt.Errorf("figures: %s has two sources", f.name)
		}
		sources[f.name] = true
	}
	var orphans []string
	for name := range svgs {
		if !sources[name] {
			orphans = append(orphans, name)
		}
	}
	sort.Strings(orphans)
	for _, name := range orphans {
		figs = append(figs, figure{name: name, err: fmt.Errorf("%s: %w: a drawing with no source (delete it, or add %s.seq, .chart or .tree)", filepath.Join(dir, name+".svg"), ErrOrphan, name)})
	}
	return figs, nil
}

// refRE matches a figure reference in a chapter.
var refRE = regexp.MustCompile(`!\[([^\]]*)\]\(figures/([A-Za-z0-9_-]+)\.svg\)`)

var (
	headingRE  = regexp.MustCompile(`^#{1,6}\s`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
)

// Ref is one figure reference in a chapter.
type Ref struct {
	Page    string // docs/09-backpressure.md
	Line    int
	Alt     string
	Name    string
	Section string // the prose of the section around it, the reference's line left out
	// Alone is whether the reference is a line of its own between blank
	// lines, which the site draws as a figure.
	Alone bool
}

// Refs finds the figure references of the chapters (docs/*.md), each with
// its section: the lines from the heading above it to the next heading,
// code blocks included and the reference's own line left out.
func Refs(docs string) ([]Ref, error) {
	pages, err := filepath.Glob(filepath.Join(docs, "*.md"))
	if err != nil {
		return nil, err
	}
	var out []Ref
	for _, p := range pages {
		text, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("figures: %w", err)
		}
		lines := strings.Split(string(text), "\n")
		heading := make([]bool, len(lines))
		fence := false
		for i, l := range lines {
			t := strings.TrimSpace(l)
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				fence = !fence
				continue
			}
			heading[i] = !fence && headingRE.MatchString(l)
		}
		fence = false
		for i, l := range lines {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				fence = !fence
			}
			if fence {
				continue // an example in a code block is no reference
			}
			for _, m := range refRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(l, ""), -1) {
				lo, hi := i, i+1
				for lo > 0 && !heading[lo] {
					lo--
				}
				for hi < len(lines) && !heading[hi] {
					hi++
				}
				section := strings.Join(lines[lo:i], "\n") + "\n" + strings.Join(lines[i+1:hi], "\n")
				alone := strings.TrimSpace(l) == m[0] && (i == 0 || strings.TrimSpace(lines[i-1]) == "") && (i+1 == len(lines) || strings.TrimSpace(lines[i+1]) == "")
				out = append(out, Ref{Page: p, Line: i + 1, Alt: m[1], Name: m[2], Section: section, Alone: alone})
			}
		}
	}
	return out, nil
}

// checkDocs checks the references against the figures and returns how many
// references there are and the problems found.
func checkDocs(docs string, figs []figure) (int, []error) {
	refs, err := Refs(docs)
	if err != nil {
		return 0, []error{err}
	}
	byName := map[string]*figure{}
	for i := range figs {
		byName[figs[i].name] = &figs[i]
	}
	var problems []error
	shown := map[string]bool{}
	for _, r := range refs {
		at := fmt.Sprintf("%s:%d", r.Page, r.Line)
		if !r.Alone {
			problems = append(problems, fmt.Errorf("%s: %w: a figure reference is a paragraph of its own, the line ![TITLE](figures/%s.svg) and nothing else", at, ErrReference, r.Name))
		}
		f, ok := byName[r.Name]
		if !ok || f.source == "" {
			problems = append(problems, fmt.Errorf("%s: %w: figures/%s.svg has no source in %s", at, ErrReference, r.Name, filepath.Join(docs, "figures")))
			continue
		}
		shown[r.Name] = true
		if f.err != nil {
			continue // reported with the figure
		}
		info := diagram.Info(f.fig)
		if r.Alt != info.Title {
			problems = append(problems, fmt.Errorf("%s: %w: alt text %q, want the figure's title %q", at, ErrReference, r.Alt, info.Title))
		}
		stated := map[string]bool{}
		for _, n := range diagram.Numbers(r.Section) {
			stated[n] = true
		}
		for _, a := range info.Asserts {
			v, _ := a.NormalValue()
			if !stated[v] {
				problems = append(problems, fmt.Errorf("%s: %w: %s line %d (%s): the section around the reference never states %s", at, ErrProse, f.source, a.Line, a, a.Value))
			}
		}
	}
	for _, f := range figs {
		if f.source != "" && !shown[f.name] {
			problems = append(problems, fmt.Errorf("%s: %w: no chapter shows it (![%s](figures/%s.svg))", f.source, ErrOrphan, titleOf(f), f.name))
		}
	}
	return len(refs), problems
}

func titleOf(f figure) string {
	if f.fig == nil {
		return "TITLE"
	}
	return diagram.Info(f.fig).Title
}
