//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fourth-outcome/labkit/site"
)

// figureInfo is what the test reads of one drawn figure.
type figureInfo struct {
	ID          string  `json:"id"`
	Left        float64 `json:"left"`
	Right       float64 `json:"right"`
	Width       float64 `json:"width"`
	Height      float64 `json:"height"`
	ViewW       float64 `json:"vbw"`
	ViewH       float64 `json:"vbh"`
	FontSize    float64 `json:"fontSize"`
	Display     string  `json:"display"`
	Visibility  string  `json:"visibility"`
	Title       string  `json:"title"`
	Desc        string  `json:"desc"`
	LabelledBy  string  `json:"labelledBy"`
	DescribedBy string  `json:"describedBy"`
	Texts       []struct {
		Text  string  `json:"text"`
		Left  float64 `json:"left"`
		Right float64 `json:"right"`
	} `json:"texts"`
}

const readFigures = `(() => ({
	innerWidth: window.innerWidth,
	scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
	figures: [...document.querySelectorAll('figure.diagram > svg')].map(svg => {
		const r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal, cs = getComputedStyle(svg);
		const by = id => { const e = document.getElementById(svg.getAttribute(id) || ''); return e ? e.tagName : ''; };
		return {
			id: svg.parentElement.id, left: r.left, right: r.right, width: r.width, height: r.height,
			vbw: vb.width, vbh: vb.height, fontSize: parseFloat(svg.getAttribute('font-size')),
			display: cs.display, visibility: cs.visibility,
			title: (svg.querySelector('title') || {}).textContent || '',
			desc: (svg.querySelector('desc') || {}).textContent || '',
			labelledBy: by('aria-labelledby'), describedBy: by('aria-describedby'),
			texts: [...svg.querySelectorAll('text')].map(t => { const b = t.getBoundingClientRect(); return {text: t.textContent, left: b.left, right: b.right}; }),
		};
	}),
}))()`

// TestFiguresInABrowser opens every page of the site that draws a figure,
// at a phone's 375 px and a desktop's 1280 px, and checks each figure: it
// is shown, no wider than the viewport and not stretched, its text stays
// inside it in the browser's real fonts and is at least 9 px tall at
// 375 px, and the browser's accessibility tree gives it the figure's title
// as its name and its description as its description, as a screen reader
// reads them. A phone-width screenshot of each figure is kept in
// $E2E_ARTIFACTS.
func TestFiguresInABrowser(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := site.Build(site.Config{Root: root, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	var pages []site.Page
	want := 0
	for _, p := range res.Pages {
		if len(p.Figures) > 0 {
			pages = append(pages, p)
			want += len(p.Figures)
		}
	}
	if want < 5 {
		t.Fatalf("the site draws %d figures, want the course's five at least", want)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	ctx := figureBrowser(t)
	out := os.Getenv("E2E_ARTIFACTS")
	if out == "" {
		out = filepath.Join(root, ".labkit", "e2e")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}

	for _, vp := range []struct {
		width  int64
		mobile bool
	}{{phoneWidth, true}, {1280, false}} {
		opts := []chromedp.EmulateViewportOption{}
		if vp.mobile {
			opts = append(opts, chromedp.EmulateMobile)
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(vp.width, 900, opts...)); err != nil {
			t.Fatal(err)
		}
		seen, smallest := 0, 100.0
		for _, p := range pages {
			if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+p.File), chromedp.WaitReady("body")); err != nil {
				t.Fatalf("load %s: %v", p.File, err)
			}
			raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](readFigures))
			if err != nil {
				t.Fatalf("read %s: %v", p.File, err)
			}
			var page struct {
				InnerWidth  float64      `json:"innerWidth"`
				ScrollWidth float64      `json:"scrollWidth"`
				Figures     []figureInfo `json:"figures"`
			}
			if err := json.Unmarshal(raw, &page); err != nil {
				t.Fatal(err)
			}
			at := func(f figureInfo) string {
				return p.File + "#" + f.ID + " at " + strconv.FormatInt(vp.width, 10) + " px"
			}
			// A mobile viewport widens to fit a page that is too wide, so
			// compare with the width asked for, not innerWidth.
			viewport := float64(vp.width)
			if page.ScrollWidth > viewport || page.InnerWidth > viewport {
				t.Errorf("%s at %d px: the page is %g px wide, its viewport %g", p.File, vp.width, page.ScrollWidth, page.InnerWidth)
			}
			if len(page.Figures) != len(p.Figures) {
				t.Errorf("%s: %d figures drawn, want %d", p.File, len(page.Figures), len(p.Figures))
			}
			for _, f := range page.Figures {
				seen++
				if f.Display == "none" || f.Visibility != "visible" || f.Width < 100 || f.Height < 50 {
					t.Errorf("%s: not shown (display %s, visibility %s, %gx%g px)", at(f), f.Display, f.Visibility, f.Width, f.Height)
				}
				if f.Left < 0 || f.Right > viewport+0.5 {
					t.Errorf("%s: spans %g to %g px, outside the %g px viewport", at(f), f.Left, f.Right, viewport)
				}
				if f.Width > f.ViewW+0.5 {
					t.Errorf("%s: %g px wide, stretched past its natural %g", at(f), f.Width, f.ViewW)
				}
				if ratio := f.Height / f.Width; ratio < f.ViewH/f.ViewW*0.99 || ratio > f.ViewH/f.ViewW*1.01 {
					t.Errorf("%s: %gx%g px, not the viewBox's proportions %gx%g", at(f), f.Width, f.Height, f.ViewW, f.ViewH)
				}
				size := f.FontSize * f.Width / f.ViewW
				if size < smallest {
					smallest = size
				}
				if size < 9 {
					t.Errorf("%s: its text is %.1f px, want 9 px at least", at(f), size)
				}
				if strings.TrimSpace(f.Title) == "" || f.LabelledBy != "title" || f.DescribedBy != "desc" || strings.TrimSpace(f.Desc) == "" {
					t.Errorf("%s: title %q (aria-labelledby names a %q), desc %q (aria-describedby names a %q)", at(f), f.Title, f.LabelledBy, f.Desc, f.DescribedBy)
				}
				for _, tx := range f.Texts {
					if tx.Left < f.Left-1 || tx.Right > f.Right+1 {
						t.Errorf("%s: text %q spans %.1f to %.1f px, outside the figure's %.1f to %.1f", at(f), tx.Text, tx.Left, tx.Right, f.Left, f.Right)
					}
				}
				name, desc := axNameAndDesc(t, ctx, f.ID)
				if name != f.Title || desc != f.Desc {
					t.Errorf("%s: a screen reader reads name %q and description %q, want the title %q and the desc %q", at(f), name, desc, f.Title, f.Desc)
				}
				if vp.mobile {
					shot, err := chromedp.Run(ctx, chromedp.Screenshot("#"+f.ID, chromedp.NodeVisible))
					if err != nil {
						t.Fatalf("screenshot %s: %v", at(f), err)
					}
					if err := os.WriteFile(filepath.Join(out, f.ID+"-phone.png"), shot, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if seen != want {
			t.Errorf("at %d px: checked %d figures, want %d", vp.width, seen, want)
		}
		t.Logf("%d figures on %d pages at %d px: visible, inside the viewport, text inside each figure, smallest text %.1f px, named and described for screen readers", seen, len(pages), vp.width, smallest)
	}
}

// axNameAndDesc returns the accessible name and description Chromium
// computes for the <svg> of the figure element with the id.
func axNameAndDesc(tb testing.TB, ctx context.Context, id string) (string, string) {
	tb.Helper()
	ev, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: `document.querySelector('#` + id + ` > svg')`})
	if err != nil || ev.Result == nil || ev.Result.ObjectID == "" {
		tb.Fatalf("find #%s > svg: %v", id, err)
	}
	ax, err := chromedp.Call(ctx, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{ObjectID: runtime.RemoteObjectID(ev.Result.ObjectID)})
	if err != nil || len(ax.Nodes) == 0 {
		tb.Fatalf("accessibility tree of #%s: %v", id, err)
	}
	var node *accessibility.Node
	for _, n := range ax.Nodes {
		if !n.Ignored && n.Role != nil && (string(n.Role.Value) == `"image"` || string(n.Role.Value) == `"img"`) {
			node = n
		}
	}
	if node == nil {
		tb.Fatalf("#%s > svg has no image node in the accessibility tree", id)
	}
	str := func(v *accessibility.Value) string {
		if v == nil {
			return ""
		}
		var s string
		_ = json.Unmarshal([]byte(v.Value), &s)
		return s
	}
	return str(node.Name), str(node.Description)
}

// figureBrowser starts headless Chromium for the test, stopped when it
// ends, with the accessibility domain on.
func figureBrowser(tb testing.TB) context.Context {
	tb.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser(tb)),
		chromedp.Flag("headless", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-sandbox", true), // Chromium as root (CI) needs it
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(tb.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tb.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	tb.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("start Chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	tb.Cleanup(cancelTimeout)
	if _, err := chromedp.Call(ctx, accessibility.Enable, cdp.Empty{}); err != nil {
		tb.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		tb.Fatal(err)
	}
	return ctx
}
