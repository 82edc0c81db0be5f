package diagram

import (
	"fmt"
	"math"
	"strings"
)

// Sequence is a sequence diagram: one vertical lane per party (a worker, a
// process, a store, a provider, a queue), and steps from top to bottom.
type Sequence struct {
	Common
	Lanes []Lane
	Steps []Step
}

// Lane is one party of a sequence diagram.
type Lane struct {
	// ID names the lane in steps: letters, digits, '_' and '-'.
	ID string
	// Label is drawn at the top of the lane; empty means the ID.
	Label string
}

// StepKind says what a step draws.
type StepKind int

// The kinds of step.
const (
	// Message is a request from one lane to another: a solid arrow.
	Message StepKind = iota + 1
	// Reply is an answer: a dashed arrow.
	Reply
	// Lost is a message or reply that never arrives: a dashed arrow that
	// stops half way at a red cross.
	Lost
	// Note is a box of text on a lane, or across lanes From to To.
	Note
	// Crash is a red cross on a lane: the process dies here.
	Crash
	// Begin starts a span (a lease, a lock, a pause) on a lane; with a
	// text, it takes a row to say what began.
	Begin
	// End ends the lane's open span of the same kind; with a text, it
	// takes a row to say what ended.
	End
)

// SpanKind is what a span on a lane stands for.
type SpanKind string

// The kinds of span.
const (
	// Lease is a time-limited grant: a green bar on the lane.
	Lease SpanKind = "lease"
	// Lock is a lock held: an orange bar on the lane.
	Lock SpanKind = "lock"
	// Pause is a process that is frozen (a GC pause, a migrated VM): a
	// grey band behind the lane.
	Pause SpanKind = "pause"
)

// Step is one row of a sequence diagram (Begin and End without a text
// take no row).
type Step struct {
	Kind StepKind
	// From is the sender of a message, the lane of a note, crash or span,
	// or the first lane of a note across lanes.
	From string
	// To is the receiver of a message, or the last lane of a note across
	// lanes (empty: the note is on From only).
	To string
	// Text is the message's label, the note, what the crash or the span
	// means.
	Text string
	// Time is shown in a column on the left, at this step ("12s", "t0+1m").
	Time string
	// Span is the kind of span a Begin or End starts or ends.
	Span SpanKind
	// Line is the step's line in its source, for error messages; zero for
	// a step built in Go.
	Line int
}

var arrows = map[string]StepKind{"->": Message, "-->": Reply, "-x": Lost}

// ParseSequence reads a sequence diagram's source (the .seq format of
// docs/figures/README.md).
func ParseSequence(src string) (*Sequence, error) {
	s := &Sequence{}
	lanes := map[string]bool{}
	lane := func(n int, id string) error {
		if !lanes[id] {
			return syntaxf(n, "no lane %q declared above (lane %s: LABEL)", id, id)
		}
		return nil
	}
	time := ""
	add := func(st Step) {
		st.Time, time = time, ""
		s.Steps = append(s.Steps, st)
	}
	err := parseLines(src, func(n int, line string) error {
		if rest, ok := strings.CutPrefix(line, "at "); ok || line == "at" {
			if strings.TrimSpace(rest) == "" {
				return syntaxf(n, "want at TIME")
			}
			time = strings.TrimSpace(rest)
			return nil
		}
		words, text, hasText := statement(line)
		if len(words) == 0 {
			return syntaxf(n, "a line starting with a colon")
		}
		if done, err := s.parseCommon(n, line, words, text, hasText); done {
			return err
		}
		switch kw := words[0]; {
		case kw == "lane":
			if len(words) != 2 || !idOK(words[1]) {
				return syntaxf(n, "want lane ID: LABEL (ID of letters, digits, _ and -)")
			}
			if lanes[words[1]] {
				return syntaxf(n, "lane %q declared twice", words[1])
			}
			lanes[words[1]] = true
			s.Lanes = append(s.Lanes, Lane{ID: words[1], Label: text})
		case len(words) == 3 && arrows[words[1]] != 0:
			for _, id := range []string{words[0], words[2]} {
				if err := lane(n, id); err != nil {
					return err
				}
			}
			if words[0] == words[2] {
				return syntaxf(n, "a message from lane %q to itself (use a note)", words[0])
			}
			add(Step{Kind: arrows[words[1]], From: words[0], To: words[2], Text: text, Line: n})
		case kw == "note":
			if len(words) != 2 || !hasText || text == "" {
				return syntaxf(n, "want note LANE: TEXT or note LANE..LANE: TEXT")
			}
			from, to, _ := strings.Cut(words[1], "..")
			for _, id := range []string{from, to} {
				if id == "" && id == to {
					continue
				}
				if err := lane(n, id); err != nil {
					return err
				}
			}
			add(Step{Kind: Note, From: from, To: to, Text: text, Line: n})
		case kw == "crash":
			if len(words) != 2 {
				return syntaxf(n, "want crash LANE: TEXT")
			}
			if err := lane(n, words[1]); err != nil {
				return err
			}
			add(Step{Kind: Crash, From: words[1], Text: text, Line: n})
		case kw == "begin" || kw == "end":
			if len(words) != 3 || (words[1] != string(Lease) && words[1] != string(Lock) && words[1] != string(Pause)) {
				return syntaxf(n, "want %s lease|lock|pause LANE: TEXT", kw)
			}
			if err := lane(n, words[2]); err != nil {
				return err
			}
			k := Begin
			if kw == "end" {
				k = End
			}
			add(Step{Kind: k, From: words[2], Span: SpanKind(words[1]), Text: text, Line: n})
		default:
			return syntaxf(n, "%q is not a statement of a sequence diagram (title, desc, lane, A -> B, A --> B, A -x B, note, crash, begin, end, at, assert)", words[0])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if time != "" {
		return nil, syntaxf(strings.Count(src, "\n"), "at %s is followed by no step", time)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// where names a step for an error message.
func where(st Step, i int) string {
	if st.Line > 0 {
		return fmt.Sprintf("line %d", st.Line)
	}
	return fmt.Sprintf("step %d", i+1)
}

// validate checks what the drawing relies on.
func (s *Sequence) validate() error {
	if len(s.Lanes) == 0 {
		return fmt.Errorf("%w: a sequence diagram needs a lane", ErrInvalid)
	}
	idx := map[string]int{}
	for i, l := range s.Lanes {
		if !idOK(l.ID) {
			return fmt.Errorf("%w: lane id %q (letters, digits, _ and -)", ErrInvalid, l.ID)
		}
		if _, dup := idx[l.ID]; dup {
			return fmt.Errorf("%w: lane %q twice", ErrInvalid, l.ID)
		}
		idx[l.ID] = i
	}
	type key struct {
		lane string
		kind SpanKind
	}
	open := map[key]bool{}
	for i, st := range s.Steps {
		if _, ok := idx[st.From]; !ok {
			return fmt.Errorf("%w: %s: no lane %q", ErrInvalid, where(st, i), st.From)
		}
		switch st.Kind {
		case Message, Reply, Lost:
			if _, ok := idx[st.To]; !ok {
				return fmt.Errorf("%w: %s: no lane %q", ErrInvalid, where(st, i), st.To)
			}
			if st.To == st.From {
				return fmt.Errorf("%w: %s: a message from %q to itself", ErrInvalid, where(st, i), st.From)
			}
		case Note:
			if _, ok := idx[st.To]; !ok && st.To != "" {
				return fmt.Errorf("%w: %s: no lane %q", ErrInvalid, where(st, i), st.To)
			}
		case Crash:
		case Begin, End:
			if st.Span != Lease && st.Span != Lock && st.Span != Pause {
				return fmt.Errorf("%w: %s: span kind %q (lease, lock or pause)", ErrInvalid, where(st, i), st.Span)
			}
			k := key{st.From, st.Span}
			if st.Kind == Begin && open[k] {
				return fmt.Errorf("%w: %s: a second %s on lane %q before the first ends", ErrInvalid, where(st, i), st.Span, st.From)
			}
			if st.Kind == End && !open[k] {
				return fmt.Errorf("%w: %s: end %s %s with no %s begun", ErrInvalid, where(st, i), st.Span, st.From, st.Span)
			}
			open[k] = st.Kind == Begin
		default:
			return fmt.Errorf("%w: %s: step kind %d", ErrInvalid, where(st, i), st.Kind)
		}
	}
	return nil
}

// Labels returns the lanes' labels, then each step's time and text.
func (s *Sequence) Labels() []string {
	var out []string
	for _, l := range s.Lanes {
		out = append(out, s.label(l.ID))
	}
	for _, st := range s.Steps {
		if st.Time != "" {
			out = append(out, st.Time)
		}
		if st.Text != "" {
			out = append(out, st.Text)
		}
	}
	return out
}

// Number answers "crashes" (how many crash markers) and "messages(LANE)"
// (how many messages and replies reach the lane; lost ones do not).
func (s *Sequence) Number(q string) (float64, error) {
	if q == "crashes" {
		n := 0
		for _, st := range s.Steps {
			if st.Kind == Crash {
				n++
			}
		}
		return float64(n), nil
	}
	if name, args, ok := callQuery(q); ok && name == "messages" && len(args) == 1 {
		n, found := 0, false
		for _, l := range s.Lanes {
			found = found || l.ID == args[0]
		}
		if !found {
			return 0, fmt.Errorf("%w: %s: no lane %q", ErrQuery, q, args[0])
		}
		for _, st := range s.Steps {
			if (st.Kind == Message || st.Kind == Reply) && st.To == args[0] {
				n++
			}
		}
		return float64(n), nil
	}
	return 0, fmt.Errorf("%w: %q (a sequence diagram answers label, crashes and messages(LANE))", ErrQuery, q)
}

func (s *Sequence) label(id string) string {
	for _, l := range s.Lanes {
		if l.ID == id {
			if l.Label != "" {
				return l.Label
			}
			return l.ID
		}
	}
	return id
}

// describe writes the description a screen reader reads when the figure
// has none of its own: the lanes, then every step in order.
func (s *Sequence) describe() string {
	var parts []string
	var lanes []string
	for _, l := range s.Lanes {
		lanes = append(lanes, clean(s.label(l.ID)))
	}
	parts = append(parts, "Sequence diagram. Lanes, left to right: "+strings.Join(lanes, ", ")+".")
	for _, st := range s.Steps {
		from, to, text := clean(s.label(st.From)), clean(s.label(st.To)), clean(st.Text)
		var p string
		switch st.Kind {
		case Message:
			p = from + " to " + to
		case Reply:
			p = from + " replies to " + to
		case Lost:
			p = from + " to " + to + ", lost on the way"
		case Note:
			p = "Note on " + from
			if st.To != "" && st.To != st.From {
				p += " to " + to
			}
		case Crash:
			p = from + " crashes"
		case Begin:
			p = from + "'s " + string(st.Span) + " begins"
		case End:
			p = from + "'s " + string(st.Span) + " ends"
		}
		if text != "" {
			p += ": " + text
		}
		if st.Time != "" {
			p = "At " + clean(st.Time) + ", " + p
		}
		parts = append(parts, sentence(p))
	}
	return strings.Join(parts, " ")
}

// spanStyle is how each kind of span is drawn: its half width, fill,
// stroke and the colour of its text.
var spanStyle = map[SpanKind]struct {
	half              float64
	fill, stroke, ink string
	dash              string
}{
	Lease: {5, "#c8e6c9", "#2e7d32", "#1b5e20", ""},
	Lock:  {5, "#ffe0b2", "#e65100", "#a63c00", ""},
	Pause: {13, "#ececec", "#8a8a8a", "#4d4d4d", ` stroke-dasharray="3 3"`},
}

// SVG draws the diagram.
func (s *Sequence) SVG() (string, error) {
	if err := s.validate(); err != nil {
		return "", err
	}
	n := len(s.Lanes)
	timeW := 0.0
	for _, st := range s.Steps {
		if st.Time != "" {
			timeW = math.Max(timeW, math.Max(28, textWidth(clean(st.Time), smallSize)+10))
		}
	}
	timeW = math.Min(timeW, 72)
	// Lanes share about 480 units, so that the text stays readable when
	// the drawing shrinks to a phone's width; a wide lane for a few lanes,
	// never narrower than 72, and a drawing at least 320 wide.
	gap := math.Max(72, math.Min(150, (480-timeW)/float64(n)))
	gap = math.Max(gap, (320-2*margin-timeW)/float64(n))
	x0 := margin + timeW
	width := x0 + float64(n)*gap + margin
	idx := map[string]int{}
	for i, l := range s.Lanes {
		idx[l.ID] = i
	}
	laneX := func(id string) float64 { return x0 + gap/2 + float64(idx[id])*gap }

	var back, bars, front svgWriter // drawn in this order, over the lane lines

	// Heads.
	headH := 0.0
	heads := make([][]string, n)
	for i, l := range s.Lanes {
		heads[i] = wrap(clean(s.label(l.ID)), gap-16, boldSize)
		headH = math.Max(headH, float64(len(heads[i]))*lineHeight+10)
	}
	for i, l := range s.Lanes {
		x := laneX(l.ID)
		front.raw(`<rect x="%s" y="%s" width="%s" height="%s" rx="4" fill="#eef3fb" stroke="#0057b7"/>`, f1(x-gap/2+4), f1(margin), f1(gap-8), f1(headH))
		front.text(x, margin+5+lineHeight-4+(headH-10-float64(len(heads[i]))*lineHeight)/2, "middle", heads[i], ` font-weight="600"`)
	}
	top := margin + headH
	y := top + 12

	type openSpan struct {
		y    float64
		kind SpanKind
		lane string
	}
	var spans []openSpan
	closeSpan := func(lane string, kind SpanKind, end float64) {
		for i, sp := range spans {
			if sp.lane == lane && sp.kind == kind {
				drawSpan(&back, &bars, sp.kind, laneX(lane), sp.y, end)
				spans = append(spans[:i], spans[i+1:]...)
				return
			}
		}
	}
	halo := ` stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"`
	pendingTime := ""
	timeAt := func(baseline float64) {
		if pendingTime == "" {
			return
		}
		front.text(margin+timeW-8, baseline, "end", []string{fit(clean(pendingTime), timeW-10, smallSize)}, fmt.Sprintf(` font-size="%s" fill="#555555"`, f1(smallSize)))
		pendingTime = ""
	}
	left, right := x0+4, width-margin-4
	for _, st := range s.Steps {
		if st.Time != "" {
			pendingTime = st.Time
		}
		text := clean(st.Text)
		switch st.Kind {
		case Message, Reply, Lost:
			xa, xb := laneX(st.From), laneX(st.To)
			lo, hi := math.Min(xa, xb), math.Max(xa, xb)
			w := math.Max(hi-lo-12, math.Min(2*gap-12, right-left))
			lines := wrap(text, w, fontSize)
			cx := math.Min(math.Max((lo+hi)/2, left+w/2), right-w/2)
			ink := ""
			if st.Kind == Lost {
				ink = ` fill="#555555" font-style="italic"`
			}
			front.text(cx, y+lineHeight-4, "middle", lines, halo+ink)
			ay := y + float64(len(lines))*lineHeight + 6
			timeAt(ay + 4)
			dash := ""
			if st.Kind != Message {
				dash = ` stroke-dasharray="6 4"`
			}
			dir := 1.0
			if xb < xa {
				dir = -1
			}
			if st.Kind == Lost {
				xm := xa + 0.6*(xb-xa)
				front.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#555555" stroke-width="1.5"%s/>`, f1(xa), f1(ay), f1(xm-dir*7), f1(ay), dash)
				cross(&front, xm, ay, 6)
			} else {
				front.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#1d1d1f" stroke-width="1.5"%s/>`, f1(xa), f1(ay), f1(xb-dir*8), f1(ay), dash)
				front.raw(`<path d="M%s %sL%s %sL%s %sZ" fill="#1d1d1f"/>`, f1(xb), f1(ay), f1(xb-dir*9), f1(ay-4.5), f1(xb-dir*9), f1(ay+4.5))
			}
			y = ay + 10
		case Note:
			to := st.To
			if to == "" {
				to = st.From
			}
			xa, xb := laneX(st.From), laneX(to)
			// A note may reach past its lanes, a quarter lane each side.
			lo, hi := math.Min(xa, xb)-gap*3/4+4, math.Max(xa, xb)+gap*3/4-4
			if lo < left-2 {
				lo, hi = left-2, hi+(left-2-lo)
			}
			if hi > right+2 {
				lo, hi = math.Max(left-2, lo-(hi-right-2)), right+2
			}
			lines := wrap(text, hi-lo-12, fontSize)
			if tw := textWidth(text, fontSize) + 12; len(lines) == 1 && tw < hi-lo {
				c := (xa + xb) / 2
				c = math.Min(math.Max(c, left-2+tw/2), right+2-tw/2)
				lo, hi = c-tw/2, c+tw/2
			}
			h := float64(len(lines))*lineHeight + 8
			front.raw(`<rect x="%s" y="%s" width="%s" height="%s" rx="3" fill="#fff8d6" stroke="#c9a227"/>`, f1(lo), f1(y), f1(hi-lo), f1(h))
			front.text((lo+hi)/2, y+4+lineHeight-4, "middle", lines, "")
			timeAt(y + 4 + lineHeight - 4)
			y += h + 10
		case Crash:
			x := laneX(st.From)
			var lines []string
			lx, anchor := x+16, "start"
			if right-lx >= 120 || x-16-left < right-lx {
				lines = wrap(text, right-lx, boldSize)
			} else {
				lx, anchor = x-16, "end"
				lines = wrap(text, lx-left, boldSize)
			}
			h := math.Max(28, float64(len(lines))*lineHeight+10)
			cy := y + h/2 - 2
			cross(&front, x, cy, 8)
			front.text(lx, cy-float64(len(lines)-1)*lineHeight/2+5, anchor, lines, halo+` fill="#b00020" font-weight="600"`)
			timeAt(cy + 5)
			y += h + 6
		case Begin, End:
			// A span begins or ends at the middle of its labelled row, or
			// between rows when it has no label.
			mid := y - 4
			if text != "" {
				mid = y + lineHeight/2 - 2
			}
			if st.Kind == End {
				closeSpan(st.From, st.Span, mid)
			} else {
				spans = append(spans, openSpan{y: mid, kind: st.Span, lane: st.From})
			}
			if text != "" {
				x := laneX(st.From)
				ink := halo + ` font-style="italic" fill="` + spanStyle[st.Span].ink + `"`
				var lines []string
				if right-x-16 >= textWidth(text, fontSize) || right-x >= x-left {
					lines = wrap(text, right-x-16, fontSize)
					front.text(x+16, y+lineHeight-4, "start", lines, ink)
				} else {
					lines = wrap(text, x-16-left, fontSize)
					front.text(x-16, y+lineHeight-4, "end", lines, ink)
				}
				timeAt(y + lineHeight - 4)
				y += float64(len(lines))*lineHeight + 4
			}
		}
	}
	bottom := y + 4
	for len(spans) > 0 {
		closeSpan(spans[0].lane, spans[0].kind, bottom)
	}
	height := bottom + margin

	desc := clean(s.Desc)
	if desc == "" {
		desc = s.describe()
	}
	var out svgWriter
	out.open(&s.Common, width, height, desc)
	for _, l := range s.Lanes {
		x := laneX(l.ID)
		out.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#9aa5b1" stroke-width="1.5"/>`, f1(x), f1(top), f1(x), f1(bottom))
	}
	out.b.WriteString(back.b.String())
	out.b.WriteString(bars.b.String())
	out.b.WriteString(front.b.String())
	return out.close(), nil
}

// drawSpan draws a span of a lane from y0 to y1: a pause behind the bars.
func drawSpan(back, bars *svgWriter, kind SpanKind, x, y0, y1 float64) {
	st := spanStyle[kind]
	w := back
	if kind != Pause {
		w = bars
	}
	if y1 < y0+4 {
		y1 = y0 + 4
	}
	w.raw(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="%s"%s/>`, f1(x-st.half), f1(y0), f1(2*st.half), f1(y1-y0), st.fill, st.stroke, st.dash)
}

// cross draws a red cross centred on x, y.
func cross(w *svgWriter, x, y, r float64) {
	w.raw(`<path d="M%s %sL%s %sM%s %sL%s %s" stroke="#b00020" stroke-width="3" stroke-linecap="round"/>`,
		f1(x-r), f1(y-r), f1(x+r), f1(y+r), f1(x-r), f1(y+r), f1(x+r), f1(y-r))
}
