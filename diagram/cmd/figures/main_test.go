package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/diagram"
)

// docsDir is the course's docs directory.
const docsDir = "../../../docs"

// TestCourseFiguresCurrent is the check CI relies on: every drawing in
// docs/figures is what its source gives (go generate ./diagram/ redraws
// them), every figure is referenced with its title, and every number it
// asserts is stated in the prose around the reference.
func TestCourseFiguresCurrent(t *testing.T) {
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"-check", "-docs", docsDir}, &out, &errs); err != nil {
		t.Fatalf("figures -check = %v:\n%s", err, errs.String())
	}
	var figs, redrawn, refs int
	if _, err := fmt.Sscanf(out.String(), "%d figures (%d redrawn), %d references", &figs, &redrawn, &refs); err != nil || figs < 5 || redrawn != 0 || refs < figs {
		t.Errorf("figures -check said %q, want the course's five figures or more, none redrawn, each referenced", out.String())
	}
}

// copyDocs copies the chapters and the figures to a temporary docs
// directory, where a test may break them.
func copyDocs(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	for _, pattern := range []string{"*.md", "figures/*"} {
		files, _ := filepath.Glob(filepath.Join(docsDir, pattern))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			rel, _ := filepath.Rel(docsDir, f)
			dst := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dir
}

// edit replaces old by new in a file of dir, count times (-1: all).
func edit(tb testing.TB, dir, file, old, new string, count int) {
	tb.Helper()
	p := filepath.Join(dir, file)
	data, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		tb.Fatalf("%s does not contain %q", file, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, count)), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// TestEditOneWithoutTheOther changes a number, a title or a file in one
// place only, on a copy of the course, and checks that the check fails
// and says why; and that the unbroken copy passes.
func TestEditOneWithoutTheOther(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(tb testing.TB, dir string)
		want   error
		msg    string
	}{
		{"nothing changed", func(testing.TB, string) {}, nil, ""},
		{"the peak in the figure's data only", func(tb testing.TB, dir string) {
			edit(tb, dir, "figures/backlog.chart", "600 12000", "600 13000", 1)
		}, diagram.ErrAssert, "assert max(backlog) = 12,000: the figure has 13000"},
		{"the peak in the figure, its assertion and its drawing, not in the prose", func(tb testing.TB, dir string) {
			edit(tb, dir, "figures/backlog.chart", "600 12000", "600 13000", 1)
			edit(tb, dir, "figures/backlog.chart", "= 12,000", "= 13,000", 1)
			redraw(tb, dir)
		}, ErrProse, "never states 13,000"},
		{"the oldest age in the prose only", func(tb testing.TB, dir string) {
			edit(tb, dir, "09-backpressure.md", "150", "610", -1)
		}, ErrProse, "assert max(age) = 150"},
		{"the peak in the prose only", func(tb testing.TB, dir string) {
			edit(tb, dir, "09-backpressure.md", "12,000", "10,000", -1)
			edit(tb, dir, "09-backpressure.md", "12000", "10000", -1) // ForecastBacklog(12000, ...)
		}, ErrProse, "assert max(backlog) = 12,000"},
		{"the arrival rate in the prose only", func(tb testing.TB, dir string) {
			edit(tb, dir, "09-backpressure.md", " 80", " 90", -1)
		}, ErrProse, "assert at(arrival, 300) = 80"},
		{"the database calls in the tree only", func(tb testing.TB, dir string) {
			edit(tb, dir, "figures/retry-amplification.tree", "level provider x3", "level provider x4", 1)
		}, diagram.ErrAssert, "calls(provider) = 27: the figure has 36"},
		{"the zombie's token in the figure only", func(tb testing.TB, dir string) {
			edit(tb, dir, "figures/zombie-lease.seq", "33", "35", -1)
			edit(tb, dir, "figures/zombie-lease.seq", "assert label = 35", "assert label = 33", 1)
		}, diagram.ErrAssert, "no text of the figure states 33"},
		{"the zombie's wake-up in the prose only", func(tb testing.TB, dir string) {
			edit(tb, dir, "06-fencing.md", "31", "41", -1)
		}, ErrProse, "never states 31"},
		{"a label of a figure, not redrawn", func(tb testing.TB, dir string) {
			edit(tb, dir, "figures/crash-points.seq", "deliver task-1", "deliver task-2", 1)
		}, ErrStale, "crash-points.svg"},
		{"the alt text", func(tb testing.TB, dir string) {
			edit(tb, dir, "04-retry.md", "![Retry amplification:", "![Retries:", 1)
		}, ErrReference, "want the figure's title"},
		{"a reference to a figure with no source", func(tb testing.TB, dir string) {
			edit(tb, dir, "04-retry.md", "figures/retry-amplification.svg", "figures/retries.svg", 1)
		}, ErrReference, "figures/retries.svg has no source"},
		{"a reference inside a paragraph", func(tb testing.TB, dir string) {
			edit(tb, dir, "04-retry.md", "![Retry amplification: three retrying layers, 27 calls at the provider](figures/retry-amplification.svg)\n\n", "![Retry amplification: three retrying layers, 27 calls at the provider](figures/retry-amplification.svg)\n", 1)
		}, ErrReference, "a paragraph of its own"},
		{"a figure no chapter shows", func(tb testing.TB, dir string) {
			edit(tb, dir, "06-fencing.md", "![A zombie worker and the fencing token that stops it](figures/zombie-lease.svg)", "", 1)
		}, ErrOrphan, "zombie-lease.seq: figure not referenced"},
		{"a drawing with no source", func(tb testing.TB, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "figures", "old.svg"), []byte("<svg/>"), 0o644); err != nil {
				tb.Fatal(err)
			}
		}, ErrOrphan, "old.svg: figure not referenced: a drawing with no source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDocs(t)
			tt.break_(t, dir)
			var out, errs bytes.Buffer
			err := run(context.Background(), []string{"-check", "-docs", dir}, &out, &errs)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("figures -check on an unchanged copy = %v:\n%s", err, errs.String())
				}
				return
			}
			if !errors.Is(err, errFailed) {
				t.Fatalf("figures -check = %v, want it to fail; stderr:\n%s", err, errs.String())
			}
			if !strings.Contains(errs.String(), tt.want.Error()) || !strings.Contains(errs.String(), tt.msg) {
				t.Errorf("figures -check said:\n%s\nwant %q and %q", errs.String(), tt.want, tt.msg)
			}
		})
	}
}

// redraw runs the command without -check on dir, as go generate does.
func redraw(tb testing.TB, dir string) {
	tb.Helper()
	var out, errs bytes.Buffer
	_ = run(context.Background(), []string{"-docs", dir}, &out, &errs)
}

// TestRedrawWrites checks that the command without -check writes a stale
// drawing, after which -check finds nothing to redraw.
func TestRedrawWrites(t *testing.T) {
	dir := copyDocs(t)
	svg := filepath.Join(dir, "figures", "crash-points.svg")
	if err := os.Remove(svg); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"-docs", dir}, &out, &errs); err != nil {
		t.Fatalf("figures = %v:\n%s", err, errs.String())
	}
	if !strings.Contains(out.String(), "(1 redrawn)") {
		t.Errorf("figures said %q, want one drawing redrawn", out.String())
	}
	want, _ := os.ReadFile(filepath.Join(docsDir, "figures", "crash-points.svg"))
	if got, _ := os.ReadFile(svg); !bytes.Equal(got, want) {
		t.Errorf("the redrawn crash-points.svg differs from the committed one")
	}
	if err := run(context.Background(), []string{"-docs", dir, "stray"}, &out, &errs); err == nil {
		t.Errorf("figures with an argument = nil, want an error")
	}
}

// TestRefsSection checks what counts as the prose around a reference: its
// section, heading included, code blocks included, a '#' line inside a
// code block not taken for a heading, the reference's own line left out.
func TestRefsSection(t *testing.T) {
	dir := t.TempDir()
	page := "# Page\n\n## First\n\n12 is here.\n\n## Second, with 7\n\n```\n# not a heading 8\n![in code](figures/code.svg)\n```\n\n![Title 99](figures/x.svg)\n\n9 after, and `![inline code](figures/span.svg)`.\n\n## Third\n\n10 is not near.\n"
	if err := os.WriteFile(filepath.Join(dir, "p.md"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	refs, err := Refs(dir)
	if err != nil || len(refs) != 1 {
		t.Fatalf("Refs = %v, %v, want one reference (none in code)", refs, err)
	}
	r := refs[0]
	if r.Name != "x" || r.Alt != "Title 99" || r.Line != 14 || !r.Alone {
		t.Errorf("Ref = %+v, want x, Title 99, line 14, alone", r)
	}
	got := strings.Join(diagram.Numbers(r.Section), " ")
	if got != "7 8 9" {
		t.Errorf("numbers of the section = %q, want 7 8 9 (not 12 or 10 from other sections, not 99 from the alt text)", got)
	}
}

// TestBacklogFigureIsTheFIFOQueue replays lab 09's incident job by job,
// from the rates the figure draws (which its assertions tie to the
// chapter: 80 in, 60 out, then 100 out), through a first-in first-out
// queue, and checks that the backlog and the oldest job's age the figure
// draws are the queue's, every 25 seconds. Drawing an age of ten minutes
// at the peak, as the chapter once said, fails here.
func TestBacklogFigureIsTheFIFOQueue(t *testing.T) {
	f, err := diagram.Load(filepath.Join(docsDir, "figures", "backlog.svg"))
	if err != nil {
		t.Fatal(err)
	}
	chart := f.(*diagram.Chart)
	line := func(id string) []diagram.Point {
		for _, p := range chart.Panels {
			for _, l := range p.Lines {
				if l.ID == id {
					return l.Points
				}
			}
		}
		t.Fatalf("backlog.chart has no line %q", id)
		return nil
	}
	// rate is a rate line's value just after t (a step at t takes effect).
	rate := func(pts []diagram.Point, t float64) float64 {
		v := pts[0].Y
		for _, p := range pts {
			if p.X <= t {
				v = p.Y
			}
		}
		return v
	}
	arrival, capacity := line("arrival"), line("capacity")
	for _, pts := range [][]diagram.Point{arrival, capacity} {
		for i := 1; i < len(pts); i++ {
			if pts[i].X != pts[i-1].X && pts[i].Y != pts[i-1].Y {
				t.Fatalf("rate line %v is not a step function; the replay reads it as one", pts)
			}
		}
	}
	backlog, age := line("backlog"), line("age")

	const dt = 1.0 / 400
	var queue []float64 // arrival times of the waiting jobs, oldest first
	arriveCredit, serveCredit := 0.0, 0.0
	steps := int(math.Round(chart.X.To / dt))
	checked := 0
	for i := 0; i <= steps; i++ {
		now := float64(i) * dt
		if i > 0 {
			prev := now - dt
			arriveCredit += rate(arrival, prev) * dt
			for arriveCredit >= 1-1e-9 {
				queue = append(queue, now)
				arriveCredit--
			}
			serveCredit += rate(capacity, prev) * dt
			for serveCredit >= 1-1e-9 && len(queue) > 0 {
				queue = queue[1:]
				serveCredit--
			}
			if len(queue) == 0 {
				serveCredit = 0 // idle capacity is not saved up
			}
		}
		if i%int(25/dt) != 0 {
			continue
		}
		checked++
		oldest := 0.0
		if len(queue) > 0 {
			oldest = now - queue[0]
		}
		if want, got := float64(len(queue)), interpolate(backlog, now); math.Abs(got-want) > 3 {
			t.Errorf("at %gs the figure draws a backlog of %.0f, the FIFO queue holds %.0f", now, got, want)
		}
		if want, got := oldest, interpolate(age, now); math.Abs(got-want) > 0.1 {
			t.Errorf("at %gs the figure draws an oldest age of %.1fs, the FIFO queue's oldest job is %.1fs old", now, got, want)
		}
	}
	if checked != 49 {
		t.Errorf("checked %d instants, want 49 (every 25 s of 1,200)", checked)
	}
}

// interpolate is a line's y at x.
func interpolate(pts []diagram.Point, x float64) float64 {
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if x >= a.X && x <= b.X && b.X > a.X {
			return a.Y + (b.Y-a.Y)*(x-a.X)/(b.X-a.X)
		}
	}
	panic(fmt.Sprintf("no point at %g", x))
}
