package site

import "html/template"

// style is shared by every page: one column that fits a 375 px phone
// (wide tables and code scroll inside themselves, a word too long for the
// line wraps, and a case name in a table cell never does: "anywhere" would
// let a cell shrink to two letters a line), and a print layout without
// navigation.
const style = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font: 17px/1.6 system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 46rem; margin: 0 auto; padding: 0 1rem 3rem; color: #1d1d1f; overflow-wrap: break-word; }
nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; justify-content: space-between; padding: .75rem 0; border-bottom: 1px solid #ddd; font-size: 15px; }
nav.bottom { border-bottom: 0; border-top: 1px solid #ddd; margin-top: 3rem; }
a { color: #0057b7; }
h1, h2, h3, h4 { line-height: 1.25; }
h2, h3 { margin-top: 2rem; }
a.anchor { color: #999; text-decoration: none; font-weight: normal; margin-left: .25rem; }
pre { background: #f5f5f7; padding: .75rem 1rem; overflow-x: auto; border-radius: 6px; font-size: 14px; line-height: 1.45; overflow-wrap: normal; tab-size: 4; }
code { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: .9em; }
table { display: block; overflow-x: auto; max-width: 100%; border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #ccc; padding: .3rem .6rem; text-align: left; vertical-align: top; }
td code, th code { white-space: nowrap; }
blockquote { border-left: 4px solid #0057b7; margin: 1rem 0; padding: .25rem 1rem; background: #f3f7fc; }
img { max-width: 100%; height: auto; }
figure.diagram { margin: 1.5rem 0; }
figure.diagram svg { display: block; max-width: 100%; height: auto; margin: 0 auto; }
@media (max-width: 600px) { h1 { font-size: 1.6rem; } h2 { font-size: 1.3rem; } }
ol.contents > li { margin: .6rem 0; } ol.contents ul { font-size: 15px; margin: .2rem 0; }
@media print {
  nav, a.anchor { display: none; }
  body { max-width: none; font-size: 11pt; }
  pre { white-space: pre-wrap; overflow: visible; }
  table { display: table; }
  a { color: inherit; }
  h2, h3 { break-after: avoid; }
}
`

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{{.Title}} · The fourth outcome</title>
<style>` + style + `</style>
</head>
<body>
<nav aria-label="pages"><a href="index.html">Contents</a>
{{- if .Prev}}<a rel="prev" href="{{.Prev.File}}">← {{.Prev.Title}}</a>{{end}}
{{- if .Next}}<a rel="next" href="{{.Next.File}}">{{.Next.Title}} →</a>{{end}}</nav>
<main>
{{.Body}}
</main>
<nav class="bottom" aria-label="pages (end)"><a href="index.html">Contents</a>
{{- if .Prev}}<a rel="prev" href="{{.Prev.File}}">← {{.Prev.Title}}</a>{{end}}
{{- if .Next}}<a rel="next" href="{{.Next.File}}">{{.Next.Title}} →</a>{{end}}</nav>
</body>
</html>
`))

var contentsTemplate = template.Must(template.New("contents").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Contents · The fourth outcome</title>
<style>` + style + `</style>
</head>
<body>
<main>
<h1 id="contents">The fourth outcome: contents</h1>
<ol class="contents">
{{- range $p := .Pages}}
<li><a href="{{.File}}">{{.Title}}</a>
{{- if .Sections}}<ul>{{range .Sections}}<li><a href="{{$p.File}}#{{.ID}}">{{.Title}}</a></li>{{end}}</ul>{{end}}</li>
{{- end}}
</ol>
</main>
</body>
</html>
`))
