package diagram

import (
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the expected SVG in testdata/*.txt")

// golden is one testdata/*.txt file: a figure source and the SVG it must
// give, in sections that start with a "-- NAME --" line, as
//
//	-- NAME.seq --
//	(the source)
//	-- svg --
//	(the expected drawing)
type golden struct {
	path, name, source, svg string
}

func readGolden(tb testing.TB, path string) golden {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	g := golden{path: path}
	var cur *string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if t := strings.TrimSuffix(line, "\n"); strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") {
			name := strings.TrimSuffix(strings.TrimPrefix(t, "-- "), " --")
			if name == "svg" {
				cur = &g.svg
			} else {
				g.name, cur = name, &g.source
			}
			continue
		}
		if cur == nil {
			tb.Fatalf("%s: text before the first -- NAME -- line", path)
		}
		*cur += line
	}
	if g.name == "" {
		tb.Fatalf("%s: no source section", path)
	}
	return g
}

func (g golden) write(tb testing.TB, svg string) {
	tb.Helper()
	text := "-- " + g.name + " --\n" + g.source + "-- svg --\n" + svg
	if err := os.WriteFile(g.path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// TestGolden draws every testdata/*.txt source and compares the drawing
// with the one recorded beside it (go test ./diagram/ -update rewrites
// them). Each drawing is also checked as an SVG a browser and a screen
// reader can use (checkSVG).
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if len(files) < 5 {
		t.Fatalf("found %d golden files in testdata, want the 5 or more kept there", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			g := readGolden(t, path)
			got, err := Render(g.name, g.source)
			if err != nil {
				t.Fatalf("Render(%s) = %v", g.name, err)
			}
			checkSVG(t, got)
			checkTextInside(t, got)
			if *update {
				g.write(t, got)
				return
			}
			if got != g.svg {
				t.Errorf("Render(%s) differs from %s (go test ./diagram/ -update rewrites it):\n%s", g.name, path, cmp.Diff(g.svg, got))
			}
			again, _ := Render(g.name, g.source)
			if again != got {
				t.Errorf("Render(%s) twice gave two drawings", g.name)
			}
		})
	}
}

// TestCourseFigures checks the course's own figures (docs/figures) as
// TestGolden checks the goldens: well-formed, accessible, text inside.
// diagram/cmd/figures checks that the committed drawings are current.
func TestCourseFigures(t *testing.T) {
	var files []string
	for _, ext := range Extensions {
		m, _ := filepath.Glob(filepath.Join("..", "docs", "figures", "*"+ext))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no docs/figures here")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			svgPath := strings.TrimSuffix(path, filepath.Ext(path)) + ".svg"
			f, err := Load(svgPath)
			if err != nil {
				t.Fatal(err)
			}
			svg, err := f.SVG()
			if err != nil {
				t.Fatal(err)
			}
			checkSVG(t, svg)
			checkTextInside(t, svg)
			if err := CheckAll(f); err != nil {
				t.Error(err)
			}
		})
	}
}

// svgInfo is what checkSVG reads from a drawing.
type svgInfo struct {
	width, height float64
	title, desc   string
	texts         []string // every text node, decoded
}

var viewBoxRE = regexp.MustCompile(`^0 0 ([0-9.]+) ([0-9.]+)$`)

// checkSVG parses a drawing as strict XML and checks what every drawing
// promises: one <svg> root with a viewBox and a matching width and height,
// role="img" with aria-labelledby naming its <title> and aria-describedby
// its <desc>, both non-empty; no script, no event handler, no link or
// reference to anything outside it; valid UTF-8 throughout; and no text or
// shape outside the viewBox.
func checkSVG(tb testing.TB, svg string) svgInfo {
	tb.Helper()
	if !utf8.ValidString(svg) {
		tb.Errorf("the drawing is not valid UTF-8")
	}
	dec := xml.NewDecoder(strings.NewReader(svg))
	dec.Strict = true
	var info svgInfo
	ids := map[string]string{} // id -> element
	var root map[string]string
	var stack []string
	idText := map[string]*strings.Builder{}
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatalf("the drawing is not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			name := tok.Name.Local
			stack = append(stack, name)
			attrs := map[string]string{}
			for _, a := range tok.Attr {
				attrs[a.Name.Local] = a.Value
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") || a.Name.Local == "href" || a.Name.Local == "style" {
					tb.Errorf("<%s> has attribute %s=%q: a drawing has no script, link or style", name, a.Name.Local, a.Value)
				}
				if strings.Contains(a.Value, "url(") {
					tb.Errorf("<%s %s=%q> refers to something outside the drawing", name, a.Name.Local, a.Value)
				}
			}
			switch name {
			case "svg", "title", "desc", "rect", "line", "path", "polyline", "circle", "text", "tspan":
			default:
				tb.Errorf("unexpected element <%s>", name)
			}
			if depth == 1 {
				if name != "svg" {
					tb.Fatalf("root element <%s>, want <svg>", name)
				}
				root = attrs
			}
			if id := attrs["id"]; id != "" {
				if _, dup := ids[id]; dup {
					tb.Errorf("id %q twice", id)
				}
				ids[id] = name
				idText[id] = &strings.Builder{}
			}
			if name == "rect" || name == "line" || name == "circle" {
				for _, k := range []string{"x", "x1", "x2", "cx", "y", "y1", "y2", "cy"} {
					if v, ok := attrs[k]; ok {
						f, err := strconv.ParseFloat(v, 64)
						if err != nil || f < 0 || (strings.HasPrefix(k, "x") || k == "cx") && f > info.width || (strings.HasPrefix(k, "y") || k == "cy") && f > info.height {
							tb.Errorf("<%s %s=%q> is outside the %gx%g viewBox", name, k, v, info.width, info.height)
						}
					}
				}
			}
			if depth == 1 {
				m := viewBoxRE.FindStringSubmatch(attrs["viewBox"])
				if m == nil {
					tb.Fatalf("viewBox = %q, want 0 0 W H", attrs["viewBox"])
				}
				info.width, _ = strconv.ParseFloat(m[1], 64)
				info.height, _ = strconv.ParseFloat(m[2], 64)
				if attrs["width"] != m[1] || attrs["height"] != m[2] {
					tb.Errorf("width, height = %s, %s, want the viewBox's %s, %s", attrs["width"], attrs["height"], m[1], m[2])
				}
			}
		case xml.EndElement:
			depth--
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				continue
			}
			text := string(tok)
			switch stack[len(stack)-1] {
			case "title":
				info.title += text
			case "desc":
				info.desc += text
			case "text", "tspan":
				if strings.TrimSpace(text) != "" {
					info.texts = append(info.texts, text)
				}
			}
		case xml.ProcInst, xml.Directive:
			tb.Errorf("unexpected %T in the drawing", tok)
		}
	}
	if root["role"] != "img" {
		tb.Errorf(`role = %q, want "img"`, root["role"])
	}
	if ids[root["aria-labelledby"]] != "title" {
		tb.Errorf("aria-labelledby = %q, which is not the id of the <title>", root["aria-labelledby"])
	}
	if ids[root["aria-describedby"]] != "desc" {
		tb.Errorf("aria-describedby = %q, which is not the id of the <desc>", root["aria-describedby"])
	}
	if strings.TrimSpace(info.title) == "" || strings.TrimSpace(info.desc) == "" {
		tb.Errorf("title %q, desc %q: want both", info.title, info.desc)
	}
	if info.width > 560 || info.width < 300 {
		tb.Errorf("the drawing is %g wide, want 300 to 560 so that its text stays readable at 375 px", info.width)
	}
	if strings.Contains(strings.ToLower(svg), "<script") {
		tb.Errorf("the drawing has a script element")
	}
	return info
}

// hostile are strings a student's program may put in a feedback timeline.
var hostile = []string{
	`<script>alert("x")</script>`,
	`Tom & Jerry's "quote" <b>bold</b>`,
	"invalid \xff\xfe UTF-8 and a NUL \x00 and an escape \x1b[31m",
	"right-to-left \u202eoverride",
	"]]> <!-- -->  <![CDATA[ x ]]>",
	strings.Repeat("long", 400),
}

// TestHostileText puts strings a student could supply into every place a
// text goes, in each kind of figure, and checks that each drawing is
// well-formed, has no script, and shows the text escaped and cleaned:
// invalid UTF-8 and control characters as U+FFFD, cut at maxText.
func TestHostileText(t *testing.T) {
	for i, h := range hostile {
		seq := &Sequence{
			Common: Common{Name: `x"><script>`, Title: h},
			Lanes:  []Lane{{ID: "a", Label: h}, {ID: "b", Label: h}},
			Steps: []Step{
				{Kind: Message, From: "a", To: "b", Text: h, Time: h},
				{Kind: Reply, From: "b", To: "a", Text: h},
				{Kind: Lost, From: "a", To: "b", Text: h},
				{Kind: Note, From: "a", To: "b", Text: h},
				{Kind: Crash, From: "b", Text: h},
				{Kind: Begin, From: "a", Span: Lease, Text: h},
				{Kind: End, From: "a", Span: Lease, Text: h},
			},
		}
		chart := &Chart{
			Common: Common{Title: h, Desc: h},
			X:      Axis{Label: h, From: 0, To: 10},
			Panels: []Panel{{ID: "p", Label: h, Lines: []Line{{ID: "l", Points: []Point{{0, 1}, {10, 2}}}, {ID: "m", Points: []Point{{0, 2}, {10, 1}}}}}},
			Marks:  []Mark{{X: 5, Text: h}},
			Notes:  []ChartNote{{Line: "l", X: 5, Text: h}},
		}
		tree := &Tree{Common: Common{Title: h}, Levels: []Level{{ID: "a", Label: h, Attempts: 1}, {ID: "b", Label: h, Attempts: 2}}}
		for _, f := range []Figure{seq, chart, tree} {
			svg, err := f.SVG()
			if err != nil {
				t.Fatalf("hostile %d: %T.SVG() = %v", i, f, err)
			}
			info := checkSVG(t, svg)
			want := clean(h)
			if info.title != want {
				t.Errorf("hostile %d: %T title = %q, want %q", i, f, info.title, want)
			}
			if !strings.Contains(info.desc, want) {
				t.Errorf("hostile %d: %T desc = %q, want it to contain %q", i, f, info.desc, want)
			}
			for _, bad := range []string{"\x00", "\x1b", "\u202e", "\xff"} {
				if strings.Contains(svg, bad) {
					t.Errorf("hostile %d: %T drawing contains %q", i, f, bad)
				}
			}
			if strings.Contains(svg, `"><script>`) {
				t.Errorf("hostile %d: %T: the name reached an attribute unescaped", i, f)
			}
		}
	}
}

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"  two\n\tlines  ", "two lines"},
		{"bad \xff byte", "bad \ufffd byte"},
		{"nul\x00", "nul\ufffd"},
		{"rtl \u202e", "rtl \ufffd"},
		{"é ✓ 漢", "é ✓ 漢"},
		{strings.Repeat("x", maxText+5), strings.Repeat("x", maxText) + "…"},
	}
	for _, tt := range tests {
		if got := clean(tt.in); got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := esc(`<a href="x">&'`); got != "&lt;a href=&quot;x&quot;&gt;&amp;&#39;" {
		t.Errorf("esc = %q", got)
	}
}

func TestWrap(t *testing.T) {
	lines := wrap("Write(33, \"balance 100 (A, stale)\") and more words here", 120, fontSize)
	if len(lines) < 2 {
		t.Errorf("wrap = %q, want several lines", lines)
	}
	for _, l := range lines {
		if textWidth(l, fontSize) > 120 {
			t.Errorf("wrap line %q is %g wide, want at most 120", l, textWidth(l, fontSize))
		}
	}
	if got := strings.Join(lines, " "); got != "Write(33, \"balance 100 (A, stale)\") and more words here" {
		t.Errorf("wrap lost text: %q", got)
	}
	long := wrap(strings.Repeat("漢", 40), 100, fontSize)
	if len(long) < 4 || strings.Join(long, "") != strings.Repeat("漢", 40) {
		t.Errorf("wrap of one long word = %q, want it cut into lines, nothing lost", long)
	}
	if got := wrap("", 100, fontSize); got != nil {
		t.Errorf("wrap(\"\") = %q, want nothing", got)
	}
}

// TestTextStaysInside draws figures with short, long and unbroken texts at
// every lane and checks that no text's estimated box leaves the viewBox.
func TestTextStaysInside(t *testing.T) {
	texts := []string{"ok", "a much longer label that has to wrap over several lines to fit", strings.Repeat("unbroken", 12)}
	for lanes := 1; lanes <= 6; lanes++ {
		for _, txt := range texts {
			s := &Sequence{Common: Common{Title: "t"}}
			for i := 0; i < lanes; i++ {
				s.Lanes = append(s.Lanes, Lane{ID: strconv.Itoa(i), Label: txt})
			}
			for i := 0; i < lanes; i++ {
				id := strconv.Itoa(i)
				s.Steps = append(s.Steps,
					Step{Kind: Crash, From: id, Text: txt, Time: txt},
					Step{Kind: Note, From: id, Text: txt},
					Step{Kind: Begin, From: id, Span: Pause, Text: txt},
					Step{Kind: End, From: id, Span: Pause, Text: txt})
				for j := 0; j < lanes; j++ {
					if i != j {
						s.Steps = append(s.Steps, Step{Kind: Message, From: id, To: strconv.Itoa(j), Text: txt})
					}
				}
			}
			svg, err := s.SVG()
			if err != nil {
				t.Fatal(err)
			}
			checkSVG(t, svg)
			checkTextInside(t, svg)
		}
	}
}

var textRE = regexp.MustCompile(`<text x="([0-9.-]+)" y="[0-9.-]+"(?: text-anchor="(middle|end)")?([^>]*)>(.*?)</text>`)
var tspanRE = regexp.MustCompile(`<tspan[^>]*>(.*?)</tspan>`)

// checkTextInside estimates each text's box as the renderer does and
// checks that it lies within the viewBox.
func checkTextInside(tb testing.TB, svg string) {
	tb.Helper()
	m := viewBoxRE.FindStringSubmatch(regexp.MustCompile(`viewBox="([^"]+)"`).FindStringSubmatch(svg)[1])
	width, _ := strconv.ParseFloat(m[1], 64)
	for _, t := range textRE.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(t[1], 64)
		size := fontSize
		if strings.Contains(t[3], `font-size="12"`) {
			size = smallSize
		}
		if strings.Contains(t[3], `font-weight="600"`) {
			size = boldSize
		}
		lines := []string{t[4]}
		if spans := tspanRE.FindAllStringSubmatch(t[4], -1); spans != nil {
			lines = nil
			for _, s := range spans {
				lines = append(lines, s[1])
			}
		}
		for _, l := range lines {
			l = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'").Replace(l)
			w := textWidth(l, size)
			lo, hi := x, x+w
			switch t[2] {
			case "middle":
				lo, hi = x-w/2, x+w/2
			case "end":
				lo, hi = x-w, x
			}
			if lo < -0.5 || hi > width+0.5 {
				tb.Errorf("text %q spans %.1f to %.1f, outside the drawing's width %g", l, lo, hi, width)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      error
		msg       string
	}{
		{"a.seq", "lane a: A\na -> b: x", ErrSyntax, `line 2: figure syntax: no lane "b"`},
		{"a.seq", "lane a: A\nlane a: again", ErrSyntax, "line 2"},
		{"a.seq", "lane a: A\na -> a: self", ErrSyntax, "to itself"},
		{"a.seq", "lane a: A\nend lease a", ErrInvalid, "with no lease begun"},
		{"a.seq", "lane a: A\nbegin lease a\nbegin lease a", ErrInvalid, "a second lease"},
		{"a.seq", "lane a: A\nbegin fence a", ErrSyntax, "lease|lock|pause"},
		{"a.seq", "lane a: A\nfrobnicate", ErrSyntax, `"frobnicate" is not a statement`},
		{"a.seq", "lane a: A\nat 3s", ErrSyntax, "followed by no step"},
		{"a.seq", "title: x", ErrInvalid, "needs a lane"},
		{"a.seq", "lane a: A\nassert label = twelve", ErrSyntax, "not a number"},
		{"a.chart", "x 0 10: t\nline a: 0 1, 2 3", ErrSyntax, "before any panel"},
		{"a.chart", "x 0 10: t\npanel p: P\nline a: 0 1, 2", ErrSyntax, "want points"},
		{"a.chart", "x 0 10: t\npanel p: P\nline a: 0 1, 20 3", ErrInvalid, "off the x axis"},
		{"a.chart", "x 0 10: t\npanel p: P\nline a: 5 1, 2 3", ErrInvalid, "x goes back"},
		{"a.chart", "x 10 0: t\npanel p: P\nline a: 5 1, 2 3", ErrInvalid, "TO above FROM"},
		{"a.chart", "x 0 10: t\npanel p: P\nline a: 0 1, 2 x", ErrSyntax, `"x" is not a number`},
		{"a.chart", "x 0 10: t\npanel p: P\nline a: 0 1, 2 3\nannotate b 1: no such", ErrInvalid, `no line "b"`},
		{"a.tree", "level a x3: A", ErrSyntax, "no xN"},
		{"a.tree", "level a: A\nlevel b x0: B", ErrSyntax, "want xN"},
		{"a.tree", "level a: A\nlevel b x11: B\nlevel c x11: C", ErrInvalid, "more than the 100"},
		{"a.txt", "", ErrKind, "unknown kind"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.name, tt.src)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Parse(%s, %q) = %v, want %v mentioning %q", tt.name, tt.src, err, tt.want, tt.msg)
		}
	}
}

// TestBuiltInGo checks the Go side a program uses without a source: an
// invalid Sequence is refused by SVG, a valid one gets a generated
// description that names every step in order.
func TestBuiltInGo(t *testing.T) {
	bad := &Sequence{Lanes: []Lane{{ID: "w"}}, Steps: []Step{{Kind: Message, From: "w", To: "store"}}}
	if _, err := bad.SVG(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `step 1: no lane "store"`) {
		t.Errorf("SVG of a message to a missing lane = %v, want ErrInvalid naming step 1", err)
	}
	s := &Sequence{
		Common: Common{Name: "case-3", Title: "zombie_write_is_refused"},
		Lanes:  []Lane{{ID: "w1", Label: "worker 1"}, {ID: "st", Label: "store"}},
		Steps: []Step{
			{Kind: Begin, From: "w1", Span: Lease},
			{Kind: Message, From: "w1", To: "st", Text: "Write(33)", Time: "1s"},
			{Kind: Lost, From: "st", To: "w1", Text: "ok"},
			{Kind: Crash, From: "w1"},
			{Kind: End, From: "w1", Span: Lease, Text: "expired"},
		},
	}
	svg, err := s.SVG()
	if err != nil {
		t.Fatal(err)
	}
	info := checkSVG(t, svg)
	want := "Sequence diagram. Lanes, left to right: worker 1, store. worker 1's lease begins. At 1s, worker 1 to store: Write(33). store to worker 1, lost on the way: ok. worker 1 crashes. worker 1's lease ends: expired."
	if info.desc != want {
		t.Errorf("generated desc =\n%q\nwant\n%q", info.desc, want)
	}
	if !strings.Contains(svg, `aria-labelledby="case-3-title"`) {
		t.Errorf("the ids do not use the figure's name")
	}
}

func TestQueriesAndAsserts(t *testing.T) {
	chart, err := ParseChart("x 0 1200: s\npanel p: P\nline backlog: 0 0, 600 12000, 1200 0\nline cap: 0 60, 600 60, 600 100, 1200 100\n")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := ParseTree("level app: app\nlevel gw x3: gw\nlevel db x3: db\n")
	if err != nil {
		t.Fatal(err)
	}
	seq, err := ParseSequence("lane a: A\nlane b: B\na -> b: x\nb --> a: y\na -x b: z\ncrash a: boom\ncrash b\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		f     Figure
		query string
		want  float64
	}{
		{chart, "max(backlog)", 12000},
		{chart, "argmax(backlog)", 600},
		{chart, "drain(backlog)", 600},
		{chart, "min(cap)", 60},
		{chart, "at(backlog, 300)", 6000},
		{chart, "at(cap, 300)", 60},
		{chart, "at(cap, 900)", 100},
		{tree, "calls(app)", 1},
		{tree, "calls(db)", 9},
		{seq, "crashes", 2},
		{seq, "messages(b)", 1}, // the lost one does not arrive
		{seq, "messages(a)", 1},
	}
	for _, tt := range tests {
		got, err := tt.f.Number(tt.query)
		if err != nil || got != tt.want {
			t.Errorf("%T.Number(%q) = %v, %v, want %v", tt.f, tt.query, got, err, tt.want)
		}
	}
	for _, q := range []string{"max(nope)", "median(backlog)", "at(backlog, 5000)", "drain(cap)", "max"} {
		if _, err := chart.Number(q); !errors.Is(err, ErrQuery) {
			t.Errorf("chart.Number(%q) = %v, want ErrQuery", q, err)
		}
	}
	if _, err := tree.Number("calls(x)"); !errors.Is(err, ErrQuery) {
		t.Errorf("tree.Number(calls(x)) = %v, want ErrQuery", err)
	}
	// Assertions: a right one passes, a wrong number fails, a label
	// assertion looks for the number in the drawn texts.
	for _, tt := range []struct {
		f    Figure
		a    Assert
		want error
	}{
		{chart, Assert{Query: "max(backlog)", Value: "12,000"}, nil},
		{chart, Assert{Query: "max(backlog)", Value: "12,001"}, ErrAssert},
		{chart, Assert{Query: "nope(backlog)", Value: "1"}, ErrQuery},
		{tree, Assert{Query: "calls(db)", Value: "9"}, nil},
		{tree, Assert{Query: "calls(db)", Value: "27"}, ErrAssert},
		{tree, Assert{Query: "label", Value: "9"}, nil}, // "9 calls"
		{seq, Assert{Query: "label", Value: "33"}, ErrAssert},
		{seq, Assert{Query: "crashes", Value: "two"}, ErrSyntax},
	} {
		if err := tt.a.Check(tt.f); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("%s on %T = %v, want %v", tt.a, tt.f, err, tt.want)
		}
	}
}

func TestNumbers(t *testing.T) {
	got := Numbers("The queue holds 12,000 jobs; the oldest is 150 s old, t=10s, 0.5 and four crash points.")
	want := []string{"12000", "150", "10", "0.5", "4"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Numbers (-want +got):\n%s", diff)
	}
}

func TestTicks(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{{0, "0"}, {999, "999"}, {1200, "1,200"}, {12000, "12,000"}, {-1500, "-1,500"}, {2.5, "2.5"}, {1234567.25, "1,234,567.25"}} {
		if got := tick(tt.v); got != tt.want {
			t.Errorf("tick(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
	for _, tt := range []struct {
		span float64
		want float64
	}{{13200, 5000}, {165, 50}, {100, 25}, {1, 0.25}, {1200, 500}} {
		if got := niceStep(tt.span, 4); got != tt.want {
			t.Errorf("niceStep(%v, 4) = %v, want %v", tt.span, got, tt.want)
		}
	}
}
