// Package site builds the course as a static web site: every page of docs/
// and each lab's exercise rendered with the kit's one Markdown renderer
// (GFM, raw HTML dropped), in course order, with a contents page, previous
// and next links, a link on every heading, and a layout that reads on a
// phone and in print. CheckLinks proves that every link and anchor of a
// built site resolves.
package site

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/fourth-outcome/labkit/diagram"
	"github.com/fourth-outcome/labkit/render"
)

// Config says where the course is and where the site goes.
type Config struct {
	// Root is the kit checkout, holding docs/ and labs/.
	Root string
	// Out is the directory the pages are written to; it is created.
	Out string
}

// Page is one page of the site.
type Page struct {
	Source string // the Markdown file, relative to the root: "docs/01-claim.md"
	File   string // the HTML file, relative to the site: "01-claim.html"
	Title  string
	// Sections are the page's second-level headings, for the contents.
	Sections []Section
	// Figures are the names of the figures drawn in the page, in order.
	Figures []string
}

// Section is a heading of a page and its anchor.
type Section struct{ Title, ID string }

// Result describes a built site.
type Result struct {
	Pages []Page // in reading order; index.html (the contents) is not one of them
}

// ErrNoDocs is returned when the root has no docs/*.md.
var ErrNoDocs = errors.New("no course pages")

// tail is the order of the pages after the chapters; other pages follow
// them in name order, and the authors' guide comes last.
var tail = []string{"interview.md", "glossary.md", "further-reading.md", "instructors.md"}

var chapterRE = regexp.MustCompile(`^([0-9]{2})-[a-z0-9-]+\.md$`)

// Sources lists the Markdown files of the site, relative to root, in
// reading order: docs/README.md, each chapter followed by its lab's
// exercise, the interview, glossary, further reading and instructor
// pages, any other page, and docs/AUTHORING.md.
func Sources(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoDocs, filepath.Join(root, "docs"))
	}
	names := map[string]bool{}
	for _, f := range files {
		names[filepath.Base(f)] = true
	}
	var out []string
	add := func(name string) {
		if names[name] {
			out = append(out, "docs/"+name)
			delete(names, name)
		}
	}
	add("README.md")
	var chapters []string
	for n := range names {
		if chapterRE.MatchString(n) {
			chapters = append(chapters, n)
		}
	}
	sort.Strings(chapters)
	for _, c := range chapters {
		add(c)
		exercise := filepath.Join(root, "labs", strings.TrimSuffix(c, ".md"), "README.md")
		if _, err := os.Stat(exercise); err == nil {
			out = append(out, "labs/"+strings.TrimSuffix(c, ".md")+"/README.md")
		}
	}
	for _, t := range tail {
		add(t)
	}
	var rest []string
	for n := range names {
		if n != "AUTHORING.md" {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		add(n)
	}
	add("AUTHORING.md")
	return out, nil
}

// htmlName is the page a source becomes: docs/01-claim.md is 01-claim.html,
// labs/01-claim/README.md (the exercise) is lab-01-claim.html.
func htmlName(source string) string {
	if strings.HasPrefix(source, "labs/") {
		return "lab-" + strings.Split(source, "/")[1] + ".html"
	}
	return strings.TrimSuffix(filepath.Base(source), ".md") + ".html"
}

var (
	headingRE = regexp.MustCompile(`<h([1-6]) id="([^"]+)">(.*?)</h[1-6]>`)
	h2RE      = regexp.MustCompile(`<h2 id="([^"]+)">(.*?)</h2>`)
	mdHrefRE  = regexp.MustCompile(`href="([^":#/]+)\.md(#[^"]*)?"`)
	tagRE     = regexp.MustCompile(`<[^>]+>`)
)

// Build renders the site into c.Out and returns its pages.
func Build(c Config) (*Result, error) {
	sources, err := Sources(c.Root)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	type rendered struct {
		page Page
		body template.HTML
	}
	var pages []rendered
	for _, src := range sources {
		text, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(src)))
		if err != nil {
			return nil, fmt.Errorf("site: %w", err)
		}
		title := strings.TrimSuffix(filepath.Base(src), ".md")
		if line, _, _ := strings.Cut(string(text), "\n"); strings.HasPrefix(line, "# ") {
			title = strings.TrimPrefix(line, "# ")
		}
		if strings.HasPrefix(src, "labs/") {
			title = "Exercise: " + title
		}
		body, err := render.Body(string(text))
		if err != nil {
			return nil, fmt.Errorf("site: %s: %w", src, err)
		}
		html, figures, err := inlineFigures(c.Root, src, string(body))
		if err != nil {
			return nil, fmt.Errorf("site: %s: %w", src, err)
		}
		html = mdHrefRE.ReplaceAllStringFunc(html, func(m string) string {
			sub := mdHrefRE.FindStringSubmatch(m)
			return `href="` + htmlName("docs/"+sub[1]+".md") + sub[2] + `"`
		})
		p := Page{Source: src, File: htmlName(src), Title: title, Figures: figures}
		for _, m := range h2RE.FindAllStringSubmatch(html, -1) {
			p.Sections = append(p.Sections, Section{Title: unescape(tagRE.ReplaceAllString(m[2], "")), ID: m[1]})
		}
		html = headingRE.ReplaceAllString(html, `<h$1 id="$2">$3 <a class="anchor" href="#$2" aria-label="link to this section">#</a></h$1>`)
		pages = append(pages, rendered{p, template.HTML(html)})
	}
	res := &Result{}
	for i, r := range pages {
		var prev, next *Page
		if i > 0 {
			prev = &pages[i-1].page
		}
		if i+1 < len(pages) {
			next = &pages[i+1].page
		}
		var buf bytes.Buffer
		if err := pageTemplate.Execute(&buf, pageData{Title: r.page.Title, Body: r.body, Prev: prev, Next: next}); err != nil {
			return nil, fmt.Errorf("site: %s: %w", r.page.Source, err)
		}
		if err := os.WriteFile(filepath.Join(c.Out, r.page.File), buf.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("site: %w", err)
		}
		res.Pages = append(res.Pages, r.page)
	}
	var buf bytes.Buffer
	if err := contentsTemplate.Execute(&buf, res); err != nil {
		return nil, fmt.Errorf("site: contents: %w", err)
	}
	if err := os.WriteFile(filepath.Join(c.Out, "index.html"), buf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	return res, nil
}

// figureRE matches a figure reference as the renderer writes it: the
// paragraph ![TITLE](figures/NAME.svg). A reference inside other text
// stays an image, which CheckLinks reports as a link to nothing.
var figureRE = regexp.MustCompile(`<p><img src="(figures/[A-Za-z0-9_-]+\.svg)" alt="[^"]*"\s*/?></p>`)

// inlineFigures replaces each figure reference of a rendered page by the
// figure itself, drawn from its source (docs/figures/NAME.seq, .chart or
// .tree) as inline SVG in a <figure>: the page needs no image file, and
// a screen reader reads the drawing's own title and description. A
// reference whose source is missing is an error, as a broken link is.
func inlineFigures(root, src, html string) (string, []string, error) {
	var names []string
	seen := map[string]int{}
	var err error
	out := figureRE.ReplaceAllStringFunc(html, func(m string) string {
		sub := figureRE.FindStringSubmatch(m)
		if err != nil {
			return m
		}
		svgPath := filepath.Join(root, filepath.FromSlash(path.Dir(src)), filepath.FromSlash(sub[1]))
		f, ferr := diagram.Load(svgPath)
		if ferr != nil {
			err = ferr
			return m
		}
		info := diagram.Info(f)
		seen[info.Name]++
		if n := seen[info.Name]; n > 1 { // ids stay unique on the page
			info.Name = fmt.Sprintf("%s-%d", info.Name, n)
		}
		svg, ferr := f.SVG()
		if ferr != nil {
			err = ferr
			return m
		}
		names = append(names, info.Name)
		return `<figure class="diagram" id="figure-` + info.Name + `">` + "\n" + svg + `</figure>`
	})
	return out, names, err
}

func unescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'").Replace(s)
}

type pageData struct {
	Title      string
	Body       template.HTML
	Prev, Next *Page
}

// ErrBrokenLinks is returned by CheckLinks when a link or anchor does not
// resolve.
var ErrBrokenLinks = errors.New("broken links")

var (
	hrefRE = regexp.MustCompile(`(?:href|src)="([^"]*)"`)
	idRE   = regexp.MustCompile(` id="([^"]+)"`)
)

// LinkStats counts what CheckLinks looked at.
type LinkStats struct {
	Pages, Internal, Anchors, External int
}

// CheckLinks checks every link of the site in dir: each relative link
// names a file of the site and each anchor an id of its page. External
// links (http, https, mailto) are counted, not fetched.
func CheckLinks(dir string) (LinkStats, error) {
	var st LinkStats
	ids := map[string]map[string]bool{}
	bodies := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		bodies[rel] = string(data)
		ids[rel] = map[string]bool{}
		for _, m := range idRE.FindAllStringSubmatch(string(data), -1) {
			ids[rel][m[1]] = true
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("check links: %w", err)
	}
	var broken []string
	files := make([]string, 0, len(bodies))
	for f := range bodies {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		st.Pages++
		for _, m := range hrefRE.FindAllStringSubmatch(bodies[f], -1) {
			link := unescape(m[1])
			if strings.HasPrefix(link, "data:") {
				continue // inline, nothing to resolve
			}
			if strings.HasPrefix(link, "http://") || strings.HasPrefix(link, "https://") || strings.HasPrefix(link, "mailto:") {
				st.External++
				continue
			}
			path, anchor, _ := strings.Cut(link, "#")
			target := f
			if path != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(f), path))
				if _, ok := bodies[target]; !ok {
					if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(target))); err != nil {
						broken = append(broken, fmt.Sprintf("%s: %s (no such page)", f, link))
						continue
					}
				}
				st.Internal++
			}
			if anchor != "" {
				st.Anchors++
				if !ids[target][anchor] {
					broken = append(broken, fmt.Sprintf("%s: %s (no such anchor)", f, link))
				}
			}
		}
	}
	if len(broken) > 0 {
		return st, fmt.Errorf("%w: %d: %s", ErrBrokenLinks, len(broken), strings.Join(broken, "; "))
	}
	return st, nil
}
