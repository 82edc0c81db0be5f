package diagram

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrNoSource is returned by Load when a drawing has no source beside it,
// or more than one.
var ErrNoSource = errors.New("no figure source")

// Source returns the source of the drawing svgPath (docs/figures/NAME.svg
// is drawn from docs/figures/NAME.seq, NAME.chart or NAME.tree): the one
// that exists, or an error wrapping ErrNoSource.
func Source(svgPath string) (string, error) {
	if !strings.HasSuffix(svgPath, ".svg") {
		return "", fmt.Errorf("%s: %w: a figure is referenced by its drawing, NAME.svg", svgPath, ErrNoSource)
	}
	base := strings.TrimSuffix(svgPath, ".svg")
	var found []string
	for _, ext := range Extensions {
		if _, err := os.Stat(base + ext); err == nil {
			found = append(found, base+ext)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: %w: want %s beside it", svgPath, ErrNoSource, strings.Join(Extensions, ", "))
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s: %w: it has %d sources, %s", svgPath, ErrNoSource, len(found), strings.Join(found, ", "))
}

// Load reads and parses the source of the drawing svgPath.
func Load(svgPath string) (Figure, error) {
	src, err := Source(svgPath)
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(src)
	if err != nil {
		return nil, fmt.Errorf("figure: %w", err)
	}
	return Parse(src, string(text))
}
