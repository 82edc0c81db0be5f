package render

import (
	"bytes"
	"fmt"
	"html/template"
)

// Body converts Markdown to the HTML of a page's body, with the same
// renderer as Page (GFM, heading IDs, raw HTML dropped), for callers that
// lay out their own pages, such as the docs site.
func Body(markdown string) (template.HTML, error) {
	var body bytes.Buffer
	if err := md.Convert([]byte(markdown), &body); err != nil {
		return "", fmt.Errorf("render: %w", err)
	}
	return template.HTML(body.String()), nil // goldmark output: raw HTML in the source was already dropped
}
