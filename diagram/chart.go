package diagram

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Chart is a line chart over one x axis (usually time), drawn as panels
// stacked on top of each other, each with its own y axis: a backlog in
// jobs above an age in seconds, say, so that no panel needs two scales.
type Chart struct {
	Common
	X      Axis
	Panels []Panel
	// Marks are vertical lines across every panel at an x, labelled.
	Marks []Mark
	// Notes are texts at a point of a line.
	Notes []ChartNote
}

// Axis is the x axis: its label and range, and the distance between its
// ticks (zero: chosen).
type Axis struct {
	Label          string
	From, To, Step float64
}

// Panel is one plot of a chart, with its own y axis, from zero (or the
// lowest point, if that is below zero) to a round number above its
// highest point.
type Panel struct {
	ID    string
	Label string // the y axis: what the panel measures, with its unit
	Lines []Line
}

// Line is one series of points, joined in order. Two points with the same
// x draw a step.
type Line struct {
	ID     string
	Points []Point
}

// Point is one point of a line.
type Point struct{ X, Y float64 }

// Mark is a vertical line across the chart at X.
type Mark struct {
	X    float64
	Text string
}

// ChartNote is a text at the point of line Line at x X.
type ChartNote struct {
	Line string
	X    float64
	Text string
}

// palette colours the lines of a panel, in order.
var palette = []string{"#0057b7", "#c0392b", "#2e7d32", "#8e44ad"}

// ParseChart reads a chart's source (the .chart format of
// docs/figures/README.md).
func ParseChart(src string) (*Chart, error) {
	c := &Chart{}
	hasX := false
	panels, ids := map[string]bool{}, map[string]bool{}
	err := parseLines(src, func(n int, line string) error {
		words, text, hasText := statement(line)
		if len(words) == 0 {
			return syntaxf(n, "a line starting with a colon")
		}
		if done, err := c.parseCommon(n, line, words, text, hasText); done {
			return err
		}
		switch words[0] {
		case "x":
			if hasX {
				return syntaxf(n, "a second x axis")
			}
			if !(len(words) == 3 || (len(words) == 5 && words[3] == "step")) || !hasText {
				return syntaxf(n, "want x FROM TO [step STEP]: LABEL")
			}
			var err error
			c.X.Label = text
			if c.X.From, err = number(n, words[1]); err != nil {
				return err
			}
			if c.X.To, err = number(n, words[2]); err != nil {
				return err
			}
			if len(words) == 5 {
				if c.X.Step, err = number(n, words[4]); err != nil {
					return err
				}
			}
			hasX = true
		case "panel":
			if len(words) != 2 || !idOK(words[1]) || !hasText {
				return syntaxf(n, "want panel ID: LABEL")
			}
			if panels[words[1]] {
				return syntaxf(n, "panel %q twice", words[1])
			}
			panels[words[1]] = true
			c.Panels = append(c.Panels, Panel{ID: words[1], Label: text})
		case "line":
			if len(words) != 2 || !idOK(words[1]) || !hasText {
				return syntaxf(n, "want line ID: X Y, X Y, ...")
			}
			if len(c.Panels) == 0 {
				return syntaxf(n, "a line before any panel (panel ID: LABEL)")
			}
			if ids[words[1]] {
				return syntaxf(n, "line %q twice", words[1])
			}
			ids[words[1]] = true
			l := Line{ID: words[1]}
			for _, pair := range strings.Split(text, ",") {
				xy := strings.Fields(pair)
				if len(xy) != 2 {
					return syntaxf(n, "want points as X Y, separated by commas; got %q", strings.TrimSpace(pair))
				}
				x, err := number(n, xy[0])
				if err != nil {
					return err
				}
				y, err := number(n, xy[1])
				if err != nil {
					return err
				}
				l.Points = append(l.Points, Point{x, y})
			}
			p := &c.Panels[len(c.Panels)-1]
			p.Lines = append(p.Lines, l)
		case "mark":
			if len(words) != 2 || !hasText {
				return syntaxf(n, "want mark X: TEXT")
			}
			x, err := number(n, words[1])
			if err != nil {
				return err
			}
			c.Marks = append(c.Marks, Mark{X: x, Text: text})
		case "annotate":
			if len(words) != 3 || !hasText || text == "" {
				return syntaxf(n, "want annotate LINE X: TEXT")
			}
			x, err := number(n, words[2])
			if err != nil {
				return err
			}
			c.Notes = append(c.Notes, ChartNote{Line: words[1], X: x, Text: text})
		default:
			return syntaxf(n, "%q is not a statement of a chart (title, desc, x, panel, line, mark, annotate, assert)", words[0])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// number reads one number of a source; '_' may group digits.
func number(n int, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, syntaxf(n, "%q is not a number", s)
	}
	return v, nil
}

func (c *Chart) validate() error {
	if !(c.X.To > c.X.From) || c.X.Step < 0 || (c.X.Step > 0 && (c.X.To-c.X.From)/c.X.Step > 50) {
		return fmt.Errorf("%w: the x axis goes from %s to %s in steps of %s (want TO above FROM, and at most 50 ticks)", ErrInvalid, formatNumber(c.X.From), formatNumber(c.X.To), formatNumber(c.X.Step))
	}
	if len(c.Panels) == 0 {
		return fmt.Errorf("%w: a chart needs a panel", ErrInvalid)
	}
	for _, p := range c.Panels {
		if len(p.Lines) == 0 {
			return fmt.Errorf("%w: panel %q has no line", ErrInvalid, p.ID)
		}
		for _, l := range p.Lines {
			if len(l.Points) < 2 {
				return fmt.Errorf("%w: line %q needs two points", ErrInvalid, l.ID)
			}
			for i, pt := range l.Points {
				if math.IsNaN(pt.X) || math.IsNaN(pt.Y) || math.IsInf(pt.Y, 0) || pt.X < c.X.From || pt.X > c.X.To {
					return fmt.Errorf("%w: line %q: point (%s, %s) is off the x axis or not a number", ErrInvalid, l.ID, formatNumber(pt.X), formatNumber(pt.Y))
				}
				if i > 0 && pt.X < l.Points[i-1].X {
					return fmt.Errorf("%w: line %q: x goes back from %s to %s", ErrInvalid, l.ID, formatNumber(l.Points[i-1].X), formatNumber(pt.X))
				}
			}
		}
	}
	for _, m := range c.Marks {
		if m.X < c.X.From || m.X > c.X.To {
			return fmt.Errorf("%w: mark at %s is off the x axis", ErrInvalid, formatNumber(m.X))
		}
	}
	for _, nt := range c.Notes {
		l := c.line(nt.Line)
		if l == nil {
			return fmt.Errorf("%w: annotate: no line %q", ErrInvalid, nt.Line)
		}
		if nt.X < l.Points[0].X || nt.X > l.Points[len(l.Points)-1].X {
			return fmt.Errorf("%w: annotate %s at %s: the line has no point there", ErrInvalid, nt.Line, formatNumber(nt.X))
		}
	}
	return nil
}

func (c *Chart) line(id string) *Line {
	for i := range c.Panels {
		for j := range c.Panels[i].Lines {
			if c.Panels[i].Lines[j].ID == id {
				return &c.Panels[i].Lines[j]
			}
		}
	}
	return nil
}

// at is the line's y at x, joining its points by straight lines; at a
// step (two points with the same x) it is the first point's y.
func (l *Line) at(x float64) (float64, bool) {
	for i := 1; i < len(l.Points); i++ {
		a, b := l.Points[i-1], l.Points[i]
		if x >= a.X && x <= b.X {
			if b.X == a.X {
				return a.Y, true
			}
			return a.Y + (b.Y-a.Y)*(x-a.X)/(b.X-a.X), true
		}
	}
	return 0, false
}

// Number answers, for a line ID: max(ID) and min(ID), its highest and
// lowest y; argmax(ID), the x of its first highest point; at(ID, X), its
// y at X; and drain(ID), how long it takes from its highest point to
// reach zero.
func (c *Chart) Number(q string) (float64, error) {
	name, args, ok := callQuery(q)
	if !ok || len(args) == 0 {
		return 0, fmt.Errorf("%w: %q (a chart answers label, max(LINE), min(LINE), argmax(LINE), at(LINE, X), drain(LINE))", ErrQuery, q)
	}
	l := c.line(args[0])
	if l == nil {
		return 0, fmt.Errorf("%w: %s: no line %q", ErrQuery, q, args[0])
	}
	top := 0
	for i, p := range l.Points {
		if p.Y > l.Points[top].Y {
			top = i
		}
	}
	switch {
	case name == "max" && len(args) == 1:
		return l.Points[top].Y, nil
	case name == "argmax" && len(args) == 1:
		return l.Points[top].X, nil
	case name == "min" && len(args) == 1:
		m := l.Points[0].Y
		for _, p := range l.Points {
			m = math.Min(m, p.Y)
		}
		return m, nil
	case name == "at" && len(args) == 2:
		x, err := strconv.ParseFloat(args[1], 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %s: %q is not a number", ErrQuery, q, args[1])
		}
		y, ok := l.at(x)
		if !ok {
			return 0, fmt.Errorf("%w: %s: the line has no point at x = %s", ErrQuery, q, args[1])
		}
		return y, nil
	case name == "drain" && len(args) == 1:
		for i := top + 1; i < len(l.Points); i++ {
			a, b := l.Points[i-1], l.Points[i]
			if b.Y <= 0 {
				x := b.X
				if a.Y > 0 && b.Y < 0 {
					x = a.X + (b.X-a.X)*a.Y/(a.Y-b.Y)
				}
				return x - l.Points[top].X, nil
			}
		}
		return 0, fmt.Errorf("%w: %s: the line never comes down to zero after its highest point", ErrQuery, q)
	}
	return 0, fmt.Errorf("%w: %q (a chart answers label, max(LINE), min(LINE), argmax(LINE), at(LINE, X), drain(LINE))", ErrQuery, q)
}

// Labels returns the texts the chart draws: the panels' labels, the x
// axis's, the marks' and the notes'.
func (c *Chart) Labels() []string {
	var out []string
	for _, p := range c.Panels {
		out = append(out, p.Label)
	}
	out = append(out, c.X.Label)
	for _, m := range c.Marks {
		out = append(out, m.Text)
	}
	for _, n := range c.Notes {
		out = append(out, n.Text)
	}
	return out
}

// describe lists the chart's data for a reader who cannot see it.
func (c *Chart) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Line chart over %s, from %s to %s.", clean(c.X.Label), tick(c.X.From), tick(c.X.To))
	for _, p := range c.Panels {
		fmt.Fprintf(&b, " %s:", sentenceCase(clean(p.Label)))
		for i, l := range p.Lines {
			if len(p.Lines) > 1 {
				fmt.Fprintf(&b, " %s", clean(l.ID))
			}
			for j, pt := range l.Points {
				sep := ","
				if j == 0 {
					sep = ""
				}
				fmt.Fprintf(&b, "%s %s at %s", sep, tick(pt.Y), tick(pt.X))
			}
			if i < len(p.Lines)-1 {
				b.WriteString(";")
			}
		}
		b.WriteString(".")
	}
	for _, m := range c.Marks {
		fmt.Fprintf(&b, " At %s: %s", tick(m.X), sentence(clean(m.Text)))
	}
	return b.String()
}

func sentenceCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// niceStep returns a round distance between ticks (1, 2, 2.5 or 5 times a
// power of ten) that cuts span into at most max parts.
func niceStep(span float64, max int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(max)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// tick writes a tick's number: integers with thousands separators.
func tick(v float64) string {
	s := formatNumber(v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// SVG draws the chart.
func (c *Chart) SVG() (string, error) {
	if err := c.validate(); err != nil {
		return "", err
	}
	const (
		width  = 504.0
		plotH  = 120.0
		tickSz = 5.0
	)
	type scale struct{ lo, hi, step float64 }
	scales := make([]scale, len(c.Panels))
	labelW := 0.0
	for i, p := range c.Panels {
		lo, hi := 0.0, 0.0
		for _, l := range p.Lines {
			for _, pt := range l.Points {
				lo, hi = math.Min(lo, pt.Y), math.Max(hi, pt.Y)
			}
		}
		if hi == lo {
			hi = lo + 1
		}
		hi += (hi - lo) / 10 // room above the highest point for its note
		step := niceStep(hi-lo, 4)
		lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step-1e-9)*step
		scales[i] = scale{lo, hi, step}
		for v := lo; v <= hi+step/2; v += step {
			labelW = math.Max(labelW, textWidth(tick(v), smallSize))
		}
	}
	left := margin + labelW + 10
	right := width - margin - 10
	xStep := c.X.Step
	if xStep == 0 {
		xStep = niceStep(c.X.To-c.X.From, 6)
	}
	px := func(x float64) float64 { return left + (x-c.X.From)/(c.X.To-c.X.From)*(right-left) }

	var w svgWriter
	halo := ` stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"`
	small := fmt.Sprintf(` font-size="%s" fill="#444444"`, f1(smallSize))
	y := margin
	var plotTops []float64
	for i, p := range c.Panels {
		title := wrap(clean(p.Label), width-2*margin, boldSize)
		w.text(margin, y+lineHeight-4, "start", title, ` font-weight="600"`)
		y += float64(len(title)) * lineHeight
		if len(p.Lines) > 1 {
			lx := margin
			for j, l := range p.Lines {
				w.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"/>`, f1(lx), f1(y+lineHeight/2), f1(lx+18), f1(y+lineHeight/2), palette[j%len(palette)])
				id := clean(l.ID)
				w.text(lx+22, y+lineHeight-4, "start", []string{id}, small)
				lx += 22 + textWidth(id, smallSize) + 14
			}
			y += lineHeight
		}
		top := y + 8
		plotTops = append(plotTops, top)
		sc := scales[i]
		py := func(v float64) float64 { return top + plotH - (v-sc.lo)/(sc.hi-sc.lo)*plotH }
		for v := sc.lo; v <= sc.hi+sc.step/2; v += sc.step {
			w.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e3e3e3"/>`, f1(left), f1(py(v)), f1(right), f1(py(v)))
			w.text(left-tickSz-3, py(v)+4, "end", []string{tick(v)}, small)
		}
		for x := c.X.From; x <= c.X.To+xStep/2; x += xStep {
			w.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#efefef"/>`, f1(px(x)), f1(top), f1(px(x)), f1(top+plotH))
		}
		w.raw(`<path d="M%s %sV%sH%s" fill="none" stroke="#555555"/>`, f1(left), f1(top), f1(top+plotH), f1(right))
		if sc.lo < 0 {
			w.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#555555"/>`, f1(left), f1(py(0)), f1(right), f1(py(0)))
		}
		for j, l := range p.Lines {
			var pts []string
			for _, pt := range l.Points {
				pts = append(pts, f1(px(pt.X))+","+f1(py(pt.Y)))
			}
			col := palette[j%len(palette)]
			w.raw(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2.5" stroke-linejoin="round"/>`, strings.Join(pts, " "), col)
			for _, pt := range l.Points {
				w.raw(`<circle cx="%s" cy="%s" r="3" fill="%s"/>`, f1(px(pt.X)), f1(py(pt.Y)), col)
			}
		}
		for _, nt := range c.Notes {
			var l *Line
			for j := range p.Lines {
				if p.Lines[j].ID == nt.Line {
					l = &p.Lines[j]
				}
			}
			if l == nil {
				continue
			}
			v, _ := l.at(nt.X)
			x, yy := px(nt.X), py(v)
			text := clean(nt.Text)
			tw := textWidth(text, fontSize)
			anchor, tx := "start", x+8
			if tx+tw > right {
				anchor, tx = "end", x-8
			}
			ty := yy - 8
			if ty < top+lineHeight-4 {
				ty = yy + lineHeight
			}
			w.text(tx, ty, anchor, []string{text}, halo+` font-weight="600"`)
		}
		y = top + plotH
		if i < len(c.Panels)-1 {
			y += 16
		}
	}
	// The x axis: ticks under the last panel, then its label.
	for x := c.X.From; x <= c.X.To+xStep/2; x += xStep {
		w.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#555555"/>`, f1(px(x)), f1(y), f1(px(x)), f1(y+tickSz))
		w.text(px(x), y+tickSz+smallSize+1, "middle", []string{tick(x)}, small)
	}
	y += tickSz + smallSize + 6
	xl := wrap(clean(c.X.Label), width-2*margin, fontSize)
	w.text((left+right)/2, y+lineHeight-4, "middle", xl, "")
	y += float64(len(xl)) * lineHeight
	bottomPlot := plotTops[len(plotTops)-1] + plotH
	for _, m := range c.Marks {
		x := px(m.X)
		w.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#6d4c41" stroke-width="1.5" stroke-dasharray="5 4"/>`, f1(x), f1(plotTops[0]), f1(x), f1(bottomPlot))
		text := clean(m.Text)
		anchor, tx := "start", x+6
		if tx+textWidth(text, smallSize) > right {
			anchor, tx = "end", x-6
		}
		w.text(tx, plotTops[0]+smallSize, anchor, []string{text}, halo+fmt.Sprintf(` font-size="%s" fill="#6d4c41"`, f1(smallSize)))
	}
	height := y + margin

	desc := clean(c.Desc)
	if desc == "" {
		desc = c.describe()
	}
	var out svgWriter
	out.open(&c.Common, width, height, desc)
	out.b.WriteString(w.b.String())
	return out.close(), nil
}
