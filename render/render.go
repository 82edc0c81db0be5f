// Package render turns the kit's Markdown (feedback and the course chapters)
// into HTML pages. Feedback and the docs site share this one renderer, so a
// page reads the same wherever it came from.
package render

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmparser "github.com/yuin/goldmark/parser"

	"github.com/fourth-outcome/labkit/diagram"
)

// md is the Markdown renderer for feedback and docs: CommonMark plus GFM
// (tables, strikethrough, autolinks, task lists), heading IDs for anchors,
// and no raw HTML passed through (goldmark's safe default).
var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(gmparser.WithAutoHeadingID()),
)

// Page converts Markdown to a complete, self-contained HTML page titled
// title.
func Page(title, markdown string) ([]byte, error) {
	var body bytes.Buffer
	if err := md.Convert([]byte(markdown), &body); err != nil {
		return nil, fmt.Errorf("render %q: %w", title, err)
	}
	var page bytes.Buffer
	err := pageTemplate.Execute(&page, struct {
		Title string
		Body  template.HTML
	}{title, template.HTML(body.String())}) // goldmark output: raw HTML in the source was already dropped
	if err != nil {
		return nil, fmt.Errorf("render %q: %w", title, err)
	}
	return page.Bytes(), nil
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 16px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 50rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; overflow-wrap: break-word; }
h1, h2, h3 { line-height: 1.25; }
h3 { margin-top: 2rem; }
pre { background: #f5f5f7; padding: .75rem 1rem; overflow-x: auto; border-radius: 6px; font-size: 14px; overflow-wrap: normal; tab-size: 4; }
code { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; }
blockquote { border-left: 4px solid #d70015; margin: 1rem 0; padding: .25rem 1rem; background: #fff5f5; }
table { display: block; overflow-x: auto; max-width: 100%; border-collapse: collapse; } th, td { border: 1px solid #ccc; padding: .3rem .6rem; text-align: left; } td code, th code { white-space: nowrap; }
small { color: #555; }
figure.diagram { margin: 1rem 0; overflow-x: auto; } figure.diagram svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
{{.Body}}
</body>
</html>
`))

// timelineRE matches a timeline figure's reference as the renderer writes
// the paragraph ![...](timelines/CASE.svg) of grader's TimelineFigures.
var timelineRE = regexp.MustCompile(`<p><img src="timelines/([A-Za-z0-9_-]+)\.svg" alt="([^"]*)"\s*/?></p>`)

// InlineTimelines replaces each timeline figure reference of a rendered
// feedback page by the case's timeline drawn as a sequence diagram
// (diagram.FromTimeline), inline SVG in a <figure> with its own title and
// description; timelines maps a case's name to its timeline lines. A
// reference that cannot be drawn is dropped: the text timeline beside it
// says the same.
func InlineTimelines(html []byte, timelines map[string][]string) []byte {
	return timelineRE.ReplaceAllFunc(html, func(m []byte) []byte {
		sub := timelineRE.FindSubmatch(m)
		name := string(sub[1])
		s, err := diagram.FromTimeline("timeline-"+name, "Timeline of "+name, timelines[name])
		if err != nil {
			return nil
		}
		svg, err := s.SVG()
		if err != nil {
			return nil
		}
		return []byte(`<figure class="diagram timeline" id="timeline-` + name + `">` + "\n" + svg + "</figure>")
	})
}
