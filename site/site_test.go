package site

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/diagram"
)

// kitRoot is the repository this test runs in.
func kitRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// TestCourseSiteLinksResolve builds the site from the real course and
// checks every link and anchor in it.
func TestCourseSiteLinksResolve(t *testing.T) {
	out := t.TempDir()
	res, err := Build(Config{Root: kitRoot(t), Out: out})
	if err != nil {
		t.Fatal(err)
	}
	st, err := CheckLinks(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pages != len(res.Pages)+1 || st.Internal == 0 || st.Anchors == 0 {
		t.Errorf("CheckLinks = %+v for %d pages, want every page and some links and anchors checked", st, len(res.Pages))
	}
	if res.Pages[0].File != "README.html" {
		t.Errorf("first page = %s, want README.html", res.Pages[0].File)
	}
	var figures []string
	for _, p := range res.Pages {
		figures = append(figures, p.Figures...)
	}
	if len(figures) < 5 {
		t.Errorf("the course draws figures %q, want the five of docs/figures at least", figures)
	}
	for _, want := range []string{"01-claim.html", "lab-01-claim.html", "glossary.html", "further-reading.html", "interview.html"} {
		if _, err := os.Stat(filepath.Join(out, want)); err != nil {
			t.Errorf("site lacks %s: %v", want, err)
		}
	}
}

func TestSitePageLayout(t *testing.T) {
	root := t.TempDir()
	write(t, root, "docs/README.md", "# Course\n\nStart with [the first chapter](01-claim.md#claim-first).\n\n<script>alert(1)</script>\n")
	write(t, root, "docs/01-claim.md", "# Claim\n\n## Claim first\n\nSee the [glossary](glossary.md).\n\n| a | b |\n| - | - |\n| 1 | 2 |\n")
	write(t, root, "docs/glossary.md", "# Glossary\n\n## Claim\n\nA claim.\n")
	write(t, root, "docs/AUTHORING.md", "# Authoring\n")
	write(t, root, "labs/01-claim/README.md", "# Lab 01\n\nThe exercise.\n")
	out := t.TempDir()
	res, err := Build(Config{Root: root, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, p := range res.Pages {
		order = append(order, p.File)
	}
	if got, want := strings.Join(order, " "), "README.html 01-claim.html lab-01-claim.html glossary.html AUTHORING.html"; got != want {
		t.Errorf("page order = %s, want %s", got, want)
	}
	chapter := read(t, out, "01-claim.html")
	for _, want := range []string{
		`href="glossary.html"`,                  // .md links become pages
		`rel="prev" href="README.html"`,         // previous
		`rel="next" href="lab-01-claim.html"`,   // next
		`<a class="anchor" href="#claim-first"`, // a link on every heading
		`name="viewport" content="width=device-width`,
		`@media print`,
	} {
		if !strings.Contains(chapter, want) {
			t.Errorf("01-claim.html lacks %s", want)
		}
	}
	if readme := read(t, out, "README.html"); strings.Contains(readme, "<script>") {
		t.Errorf("raw HTML from the Markdown reached the page (unsafe rendering)")
	}
	if contents := read(t, out, "index.html"); !strings.Contains(contents, `href="01-claim.html#claim-first"`) {
		t.Errorf("contents does not list the chapter's sections:\n%s", contents)
	}
	if _, err := CheckLinks(out); err != nil {
		t.Errorf("CheckLinks: %v", err)
	}
}

func TestCheckLinksFindsBrokenOnes(t *testing.T) {
	out := t.TempDir()
	write(t, out, "a.html", `<h2 id="x">X</h2><a href="b.html">b</a><a href="a.html#y">y</a><a href="#x">x</a><a href="https://example.com">e</a>`)
	st, err := CheckLinks(out)
	if !errors.Is(err, ErrBrokenLinks) || !strings.Contains(err.Error(), "b.html (no such page)") || !strings.Contains(err.Error(), "a.html#y (no such anchor)") {
		t.Errorf("CheckLinks = %v, want both broken links named", err)
	}
	if st.External != 1 || st.Anchors != 2 {
		t.Errorf("CheckLinks stats = %+v, want 1 external and 2 anchors", st)
	}
}

func write(tb testing.TB, root, rel, text string) {
	tb.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func read(tb testing.TB, dir, name string) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// TestSiteDrawsFigures checks that a figure reference, a paragraph
// ![TITLE](figures/NAME.svg), becomes the figure drawn inline from its
// source, with ids unique on the page; that a reference to a figure with
// no source fails the build; and that a reference inside a sentence stays
// an image, which CheckLinks reports.
func TestSiteDrawsFigures(t *testing.T) {
	root := t.TempDir()
	write(t, root, "docs/figures/flow.seq", "title: A <flow> & more\nlane a: A\nlane b: B\na -> b: hello\nassert label = 1\n")
	write(t, root, "docs/01-claim.md", "# Claim\n\n![A flow](figures/flow.svg)\n\nAnd again:\n\n![A flow](figures/flow.svg)\n")
	out := t.TempDir()
	res, err := Build(Config{Root: root, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Pages[0].Figures, " "); got != "flow flow-2" {
		t.Errorf("Figures = %q, want flow flow-2", got)
	}
	page := read(t, out, "01-claim.html")
	for _, want := range []string{
		`<figure class="diagram" id="figure-flow">` + "\n" + `<svg xmlns="http://www.w3.org/2000/svg"`,
		`aria-labelledby="flow-title"`,
		`<title id="flow-title">A &lt;flow&gt; &amp; more</title>`,
		`<figure class="diagram" id="figure-flow-2">`,
		`aria-labelledby="flow-2-title"`,
		`figure.diagram svg { display: block; max-width: 100%; height: auto;`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("01-claim.html lacks %s", want)
		}
	}
	if strings.Contains(page, "<img") || strings.Contains(page, "<p><figure") {
		t.Errorf("01-claim.html still has the image, or a figure inside a paragraph")
	}
	if _, err := CheckLinks(out); err != nil {
		t.Errorf("CheckLinks: %v", err)
	}

	write(t, root, "docs/01-claim.md", "# Claim\n\n![Gone](figures/gone.svg)\n")
	if _, err := Build(Config{Root: root, Out: t.TempDir()}); !errors.Is(err, diagram.ErrNoSource) || !strings.Contains(err.Error(), "docs/01-claim.md") {
		t.Errorf("Build with a figure that has no source = %v, want ErrNoSource naming the page", err)
	}

	write(t, root, "docs/01-claim.md", "# Claim\n\nSee ![A flow](figures/flow.svg) here.\n")
	out = t.TempDir()
	if _, err := Build(Config{Root: root, Out: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckLinks(out); !errors.Is(err, ErrBrokenLinks) || !strings.Contains(err.Error(), "figures/flow.svg") {
		t.Errorf("CheckLinks with a figure inside a sentence = %v, want the image reported", err)
	}
}
