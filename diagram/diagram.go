// Package diagram draws the course's figures and the feedback's timelines
// as SVG: sequence diagrams (lanes, messages, replies, lost replies, notes,
// crashes, leases, locks and pauses), line charts over time, and retry
// trees (how attempts multiply down a chain of callers). Each kind has a
// small text format, kept beside the chapter that shows it
// (docs/figures/NAME.seq, NAME.chart and NAME.tree; docs/figures/README.md
// documents the syntax), and a Go type a program can fill in directly.
//
// The output is one <svg> element: no script, no style sheet, no external
// reference, so it works offline, inline in an HTML page or as an image
// file. It has a viewBox, so it scales down to a phone's width, a <title>
// and a <desc> named by role="img", aria-labelledby and aria-describedby,
// so a screen reader announces the figure, and every text it draws is
// escaped: a label may be any string, a student's included. The same input
// always gives the same bytes.
package diagram

//go:generate go run ./cmd/figures -docs ../docs

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Errors returned by the parsers, the renderers and Check. Each is wrapped
// with the file, the line and what was wrong.
var (
	// ErrSyntax is a line of a figure source that the format does not allow.
	ErrSyntax = errors.New("figure syntax")
	// ErrInvalid is a figure that cannot be drawn: a message to a lane that
	// does not exist, a chart without points, a tree without levels.
	ErrInvalid = errors.New("invalid figure")
	// ErrQuery is an assertion whose query the figure cannot answer.
	ErrQuery = errors.New("figure query")
	// ErrAssert is an assertion whose number the figure does not show.
	ErrAssert = errors.New("figure assertion")
	// ErrKind is a figure file whose extension names no kind of figure.
	ErrKind = errors.New("unknown kind of figure")
)

// Extensions are the file extensions of the figure sources, one per kind.
var Extensions = []string{".seq", ".chart", ".tree"}

// Common holds what every kind of figure has.
type Common struct {
	// Name makes the figure's element ids unique on a page ("NAME-title",
	// "NAME-desc"); Parse sets it from the file name. Characters other than
	// letters, digits and '-' are dropped; empty means "figure".
	Name string
	// Title is the figure's accessible name: one line, shown as a tooltip
	// and read first by a screen reader.
	Title string
	// Desc says what the figure shows, for a reader who cannot see it.
	// Left empty, it is generated from the figure's content.
	Desc string
	// Asserts are the numbers the figure depends on, which the prose
	// around it must state too.
	Asserts []Assert
}

func (c *Common) common() *Common { return c }

// Figure is a drawing of one of the package's kinds: *Sequence, *Chart or
// *Tree.
type Figure interface {
	// SVG draws the figure.
	SVG() (string, error)
	// Labels returns every text the figure draws, in drawing order.
	Labels() []string
	// Number answers a query about the figure's content, such as
	// "max(backlog)" for a chart or "calls(database)" for a tree.
	Number(query string) (float64, error)
	common() *Common
}

// Info returns the title, description and assertions shared by every kind
// of figure.
func Info(f Figure) *Common { return f.common() }

// Assert is one "assert QUERY = VALUE" line of a figure source: the figure
// shows VALUE, and the chapter's prose near the figure must state it too.
type Assert struct {
	// Query is what to measure: "label" (some text of the figure shows the
	// number) or a query of the figure's kind, such as "max(backlog)".
	Query string
	// Value is the number as the prose writes it: "12,000", "150", "0.5".
	Value string
	// Line is the source line, for messages.
	Line int
}

// String returns the assertion as it is written in a source.
func (a Assert) String() string { return "assert " + a.Query + " = " + a.Value }

// numberRE matches a number as prose writes it: digits, optionally grouped
// in thousands by commas, optionally with a fraction.
var numberRE = regexp.MustCompile(`[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?`)

// numberWords are the number words prose uses for small counts.
var numberWords = map[string]string{
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
	"six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
	"eleven": "11", "twelve": "12", "twenty": "20",
}

var wordRE = regexp.MustCompile(`[A-Za-z]+`)

// Numbers returns every number a text states, normalised: "12,000" is
// "12000", "0.50" stays "0.50", and the words zero to twelve and twenty
// are their digits. It is how assertions are compared with prose and with
// a figure's labels.
func Numbers(text string) []string {
	var out []string
	for _, m := range numberRE.FindAllString(text, -1) {
		out = append(out, strings.ReplaceAll(m, ",", ""))
	}
	for _, w := range wordRE.FindAllString(text, -1) {
		if d, ok := numberWords[strings.ToLower(w)]; ok {
			out = append(out, d)
		}
	}
	return out
}

// NormalValue returns an assertion's value as Numbers writes it, or an
// error if it is not one number.
func (a Assert) NormalValue() (string, error) {
	if !numberRE.MatchString(a.Value) || numberRE.FindString(a.Value) != a.Value {
		return "", fmt.Errorf("line %d: %w: %q is not a number (digits, thousands commas, a fraction)", a.Line, ErrSyntax, a.Value)
	}
	return strings.ReplaceAll(a.Value, ",", ""), nil
}

// Check reports whether the figure shows the assertion's number: for the
// query "label", some text of the figure states it; for any other query,
// the figure's answer equals it (to one part in a million).
func (a Assert) Check(f Figure) error {
	want, err := a.NormalValue()
	if err != nil {
		return err
	}
	if a.Query == "label" {
		for _, l := range f.Labels() {
			for _, n := range Numbers(l) {
				if n == want {
					return nil
				}
			}
		}
		return fmt.Errorf("line %d: %w: %s: no text of the figure states %s", a.Line, ErrAssert, a, a.Value)
	}
	got, err := f.Number(a.Query)
	if err != nil {
		return fmt.Errorf("line %d: %w", a.Line, err)
	}
	w, _ := strconv.ParseFloat(want, 64)
	if math.Abs(got-w) > 1e-6*math.Max(1, math.Abs(w)) {
		return fmt.Errorf("line %d: %w: %s: the figure has %s", a.Line, ErrAssert, a, formatNumber(got))
	}
	return nil
}

// CheckAll checks every assertion of the figure and joins the failures.
func CheckAll(f Figure) error {
	var errs []error
	for _, a := range f.common().Asserts {
		if err := a.Check(f); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Parse reads a figure source; the extension of name (".seq", ".chart",
// ".tree") says which kind, and its base name becomes the figure's Name.
func Parse(name, src string) (Figure, error) {
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	var (
		f   Figure
		err error
	)
	switch filepath.Ext(name) {
	case ".seq":
		f, err = ParseSequence(src)
	case ".chart":
		f, err = ParseChart(src)
	case ".tree":
		f, err = ParseTree(src)
	default:
		return nil, fmt.Errorf("%s: %w (want one of %s)", name, ErrKind, strings.Join(Extensions, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f.common().Name = base
	return f, nil
}

// Render parses a figure source and draws it.
func Render(name, src string) (string, error) {
	f, err := Parse(name, src)
	if err != nil {
		return "", err
	}
	svg, err := f.SVG()
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return svg, nil
}

// The look shared by every kind.
const (
	fontFamily = `system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif`
	fontSize   = 14.0
	smallSize  = 12.0
	// boldSize is the size at which to measure bold text: it is wider.
	boldSize   = fontSize * 1.1
	lineHeight = 18.0
	margin     = 8.0
	// charWidth is the width of an average character in ems, a little
	// wide for a sans-serif face, so that text wraps before it overflows.
	charWidth = 0.6
	// maxText is the most characters of one text the figure draws; a
	// longer one (a student's string, say) is cut with an ellipsis.
	maxText = 300
)

// clean makes s safe and tidy to draw: invalid UTF-8, control characters,
// characters XML forbids and bidirectional overrides become U+FFFD, runs of
// white space become one space, and text past maxText characters is cut.
func clean(s string) string {
	var b strings.Builder
	n := 0
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			r = unicode.ReplacementChar
		case r == '\t' || r == '\n' || r == '\r' || r == ' ':
			space = true
			continue
		case r < 0x20 || (r >= 0x7f && r < 0xa0) || r == 0xfffe || r == 0xffff ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || (r >= 0xd800 && r <= 0xdfff):
			r = unicode.ReplacementChar
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			n++
		}
		space = false
		if n >= maxText {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// esc escapes cleaned text for an XML text node or attribute value.
var esc = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace

// textWidth estimates the width of s at the given font size.
func textWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || (r >= 0x1f300 && r <= 0x1faff):
			w += 1.0
		case strings.ContainsRune("iljtfI.,:;'|!() []", r):
			w += 0.35
		case unicode.IsUpper(r) || strings.ContainsRune("mwMW@%", r):
			w += 0.78
		default:
			w += charWidth
		}
	}
	return w * size
}

// wrap breaks cleaned text into lines no wider than width at the font
// size, at spaces where it can and inside a word where it must.
func wrap(s string, width, size float64) []string {
	if s == "" {
		return nil
	}
	var lines []string
	line := ""
	for _, word := range strings.Split(s, " ") {
		try := word
		if line != "" {
			try = line + " " + word
		}
		if textWidth(try, size) <= width {
			line = try
			continue
		}
		if line != "" {
			lines = append(lines, line)
			line = ""
		}
		for textWidth(word, size) > width {
			cut := 0
			for i := range word {
				if i > 0 && textWidth(word[:i], size) > width {
					break
				}
				cut = i
			}
			if cut == 0 {
				_, cut = utf8.DecodeRuneInString(word)
			}
			lines = append(lines, word[:cut])
			word = word[cut:]
		}
		line = word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// fit cuts cleaned text to the width at the font size, ending it with an
// ellipsis when it had to be cut.
func fit(s string, width, size float64) string {
	if textWidth(s, size) <= width {
		return s
	}
	cut := ""
	for i := range s {
		if textWidth(s[:i]+"…", size) > width {
			break
		}
		cut = s[:i] + "…"
	}
	if cut == "" {
		return "…"
	}
	return cut
}

// formatNumber writes v with at most two decimals and no trailing zeros.
func formatNumber(v float64) string {
	v = math.Round(v*100) / 100
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// f1 writes a coordinate with at most one decimal.
func f1(v float64) string {
	v = math.Round(v*10) / 10
	if v == 0 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// idRE keeps what an element id may hold.
var idRE = regexp.MustCompile(`[^A-Za-z0-9-]+`)

// svgWriter builds one SVG document.
type svgWriter struct {
	b strings.Builder
}

// open writes the root element, the title, the description and a white
// background (so that the figure reads on a dark page too).
func (w *svgWriter) open(c *Common, width, height float64, desc string) {
	name := idRE.ReplaceAllString(c.Name, "")
	if name == "" {
		name = "figure"
	}
	fmt.Fprintf(&w.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-labelledby="%s-title" aria-describedby="%s-desc" font-family="%s" font-size="%s">`+"\n",
		f1(width), f1(height), f1(width), f1(height), name, name, fontFamily, f1(fontSize))
	fmt.Fprintf(&w.b, "<title id=\"%s-title\">%s</title>\n", name, esc(clean(c.Title)))
	fmt.Fprintf(&w.b, "<desc id=\"%s-desc\">%s</desc>\n", name, esc(desc))
	fmt.Fprintf(&w.b, `<rect width="%s" height="%s" rx="6" fill="#ffffff"/>`+"\n", f1(width), f1(height))
}

func (w *svgWriter) close() string {
	w.b.WriteString("</svg>\n")
	return w.b.String()
}

// raw appends markup built by the caller.
func (w *svgWriter) raw(format string, args ...any) {
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

// text draws lines of cleaned text, the first baseline at y; anchor is
// "start", "middle" or "end". attrs are extra attributes, already escaped.
func (w *svgWriter) text(x, y float64, anchor string, lines []string, attrs string) {
	if len(lines) == 0 {
		return
	}
	a := ""
	if anchor != "start" {
		a = ` text-anchor="` + anchor + `"`
	}
	if len(lines) == 1 {
		fmt.Fprintf(&w.b, `<text x="%s" y="%s"%s%s>%s</text>`+"\n", f1(x), f1(y), a, attrs, esc(lines[0]))
		return
	}
	fmt.Fprintf(&w.b, `<text x="%s" y="%s"%s%s>`, f1(x), f1(y), a, attrs)
	for i, l := range lines {
		dy := "0"
		if i > 0 {
			dy = f1(lineHeight)
		}
		fmt.Fprintf(&w.b, `<tspan x="%s" dy="%s">%s</tspan>`, f1(x), dy, esc(l))
	}
	w.b.WriteString("</text>\n")
}

// sentence ends s with a full stop unless it ends with punctuation.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if strings.ContainsAny(s[len(s)-1:], ".!?:") {
		return s
	}
	return s + "."
}

// parseLines splits a source into its statements: each non-blank line
// whose first character is not '#', with its line number.
func parseLines(src string, each func(n int, line string) error) error {
	for i, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := each(i+1, line); err != nil {
			return err
		}
	}
	return nil
}

// statement splits a line into its keyword and arguments (before the first
// colon) and its free text (after it); hasText says whether there was a
// colon.
func statement(line string) (words []string, text string, hasText bool) {
	head, text, hasText := strings.Cut(line, ":")
	return strings.Fields(head), strings.TrimSpace(text), hasText
}

// common parses the statements every kind shares: title, desc and
// assert. It reports whether the line was one of them.
func (c *Common) parseCommon(n int, line string, words []string, text string, hasText bool) (bool, error) {
	switch words[0] {
	case "title":
		if len(words) != 1 || !hasText || text == "" {
			return true, syntaxf(n, "want title: TEXT")
		}
		if c.Title != "" {
			return true, syntaxf(n, "a second title")
		}
		c.Title = text
		return true, nil
	case "desc":
		if len(words) != 1 || !hasText || text == "" {
			return true, syntaxf(n, "want desc: TEXT")
		}
		if c.Desc != "" {
			c.Desc += " "
		}
		c.Desc += text
		return true, nil
	case "assert":
		rest := strings.TrimSpace(strings.TrimPrefix(line, "assert"))
		i := strings.LastIndex(rest, "=")
		if i < 0 {
			return true, syntaxf(n, "want assert QUERY = NUMBER")
		}
		a := Assert{Query: strings.TrimSpace(rest[:i]), Value: strings.TrimSpace(rest[i+1:]), Line: n}
		if a.Query == "" {
			return true, syntaxf(n, "want assert QUERY = NUMBER")
		}
		if _, err := a.NormalValue(); err != nil {
			return true, err
		}
		c.Asserts = append(c.Asserts, a)
		return true, nil
	}
	return false, nil
}

func syntaxf(n int, format string, args ...any) error {
	return fmt.Errorf("line %d: %w: %s", n, ErrSyntax, fmt.Sprintf(format, args...))
}

// idOK reports whether s may name a lane, a series or a level.
var idOK = regexp.MustCompile(`^[A-Za-z0-9_-]+$`).MatchString

// callQuery splits "name(arg, arg)" into its name and arguments.
func callQuery(q string) (name string, args []string, ok bool) {
	open := strings.IndexByte(q, '(')
	if open <= 0 || !strings.HasSuffix(q, ")") {
		return "", nil, false
	}
	for _, a := range strings.Split(q[open+1:len(q)-1], ",") {
		args = append(args, strings.TrimSpace(a))
	}
	return strings.TrimSpace(q[:open]), args, true
}
