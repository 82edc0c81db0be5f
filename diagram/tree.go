package diagram

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Tree is a retry tree: a chain of callers, top to bottom, where each
// level makes some attempts at the next for every call it receives, so
// that the calls multiply on the way down. Each call is a dot, joined to
// the call above that made it.
type Tree struct {
	Common
	Levels []Level
}

// Level is one caller of a retry tree.
type Level struct {
	ID    string
	Label string
	// Attempts is how many calls this level receives for each call the
	// level above receives (its caller's attempts); the first level's is
	// 1, one call from the user.
	Attempts int
}

// maxCalls is the most calls a tree's lowest level may draw.
const maxCalls = 100

// ParseTree reads a retry tree's source (the .tree format of
// docs/figures/README.md).
func ParseTree(src string) (*Tree, error) {
	t := &Tree{}
	ids := map[string]bool{}
	err := parseLines(src, func(n int, line string) error {
		words, text, hasText := statement(line)
		if len(words) == 0 {
			return syntaxf(n, "a line starting with a colon")
		}
		if done, err := t.parseCommon(n, line, words, text, hasText); done {
			return err
		}
		if words[0] != "level" {
			return syntaxf(n, "%q is not a statement of a tree (title, desc, level, assert)", words[0])
		}
		if len(words) < 2 || len(words) > 3 || !idOK(words[1]) || !hasText {
			return syntaxf(n, "want level ID [xN]: LABEL")
		}
		if ids[words[1]] {
			return syntaxf(n, "level %q twice", words[1])
		}
		ids[words[1]] = true
		l := Level{ID: words[1], Label: text, Attempts: 1}
		if len(words) == 3 {
			k, err := strconv.Atoi(strings.TrimPrefix(words[2], "x"))
			if err != nil || !strings.HasPrefix(words[2], "x") || k < 1 {
				return syntaxf(n, "%q: want xN, N attempts at this level for each call above (x3)", words[2])
			}
			if len(t.Levels) == 0 && k != 1 {
				return syntaxf(n, "the first level is the one call that starts it all; it has no xN")
			}
			l.Attempts = k
		}
		t.Levels = append(t.Levels, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// calls returns how many calls each level receives.
func (t *Tree) calls() []int {
	out := make([]int, len(t.Levels))
	n := 1
	for i, l := range t.Levels {
		if i > 0 {
			n *= l.Attempts
		}
		out[i] = n
	}
	return out
}

func (t *Tree) validate() error {
	if len(t.Levels) == 0 {
		return fmt.Errorf("%w: a tree needs a level", ErrInvalid)
	}
	n := 1
	for i, l := range t.Levels {
		if l.Attempts < 1 {
			return fmt.Errorf("%w: level %q: %d attempts", ErrInvalid, l.ID, l.Attempts)
		}
		if i > 0 {
			n *= l.Attempts
		}
		if n > maxCalls {
			return fmt.Errorf("%w: level %q receives %d calls, more than the %d a tree draws", ErrInvalid, l.ID, n, maxCalls)
		}
	}
	return nil
}

// Number answers calls(LEVEL): how many calls the level receives for the
// one call at the top.
func (t *Tree) Number(q string) (float64, error) {
	name, args, ok := callQuery(q)
	if ok && name == "calls" && len(args) == 1 {
		calls := t.calls()
		for i, l := range t.Levels {
			if l.ID == args[0] {
				return float64(calls[i]), nil
			}
		}
		return 0, fmt.Errorf("%w: %s: no level %q", ErrQuery, q, args[0])
	}
	return 0, fmt.Errorf("%w: %q (a tree answers label and calls(LEVEL))", ErrQuery, q)
}

func callsText(n int) string {
	if n == 1 {
		return "1 call"
	}
	return tick(float64(n)) + " calls"
}

// Labels returns each level's label and its number of calls.
func (t *Tree) Labels() []string {
	var out []string
	for i, c := range t.calls() {
		out = append(out, t.Levels[i].Label, callsText(c))
	}
	return out
}

func (t *Tree) describe() string {
	var parts []string
	calls := t.calls()
	for i, l := range t.Levels {
		if i == 0 {
			parts = append(parts, fmt.Sprintf("%s: %s.", clean(l.Label), callsText(calls[i])))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %d attempts for each call above, %s.", clean(l.Label), l.Attempts, callsText(calls[i])))
	}
	return "Retry tree, from the top caller down. " + strings.Join(parts, " ")
}

// SVG draws the tree: one row per level, its label and number of calls on
// the left, a dot per call on the right, each joined to its caller.
func (t *Tree) SVG() (string, error) {
	if err := t.validate(); err != nil {
		return "", err
	}
	const (
		width = 504.0
		labW  = 150.0
	)
	calls := t.calls()
	leaves := calls[len(calls)-1]
	left, right := margin+labW, width-margin-4
	slot := (right - left) / float64(leaves)
	r := math.Max(2.5, math.Min(7, slot/3))
	var w svgWriter
	y := margin
	type dot struct{ x, y float64 }
	var above []dot
	for i, l := range t.Levels {
		lines := wrap(clean(l.Label), labW-10, boldSize)
		block := float64(len(lines)+1) * lineHeight
		w.text(margin, y+lineHeight-4, "start", lines, ` font-weight="600"`)
		w.text(margin, y+float64(len(lines))*lineHeight+lineHeight-4, "start", []string{callsText(calls[i])}, ` fill="#444444"`)
		cy := y + block/2
		group := leaves / calls[i]
		var row []dot
		for k := 0; k < calls[i]; k++ {
			x := left + (float64(k*group)+float64(group)/2)*slot
			row = append(row, dot{x, cy})
			if i > 0 {
				p := above[k/l.Attempts]
				w.raw(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#9aa5b1" stroke-width="1.2"/>`, f1(p.x), f1(p.y+r), f1(x), f1(cy-r))
			}
		}
		fill := "#0057b7"
		if i == len(t.Levels)-1 && i > 0 {
			fill = "#b00020"
		}
		for _, d := range row {
			w.raw(`<circle cx="%s" cy="%s" r="%s" fill="%s"/>`, f1(d.x), f1(d.y), f1(r), fill)
		}
		above = row
		y += block + 22
	}
	height := y - 22 + margin
	desc := clean(t.Desc)
	if desc == "" {
		desc = t.describe()
	}
	var out svgWriter
	out.open(&t.Common, width, height, desc)
	out.b.WriteString(w.b.String())
	return out.close(), nil
}
