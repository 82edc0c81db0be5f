//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fourth-outcome/labkit/site"
)

// brokenNames lists the code spans that are names of letters, digits,
// underscores and dots (a case name in a table, a file) broken across lines
// although each would fit on a line of its own (a hyphen is a fair place to
// break, so hyphenated names are left out): the "two letters a line" a narrow table cell
// made of a case name before the site's CSS kept them whole.
const brokenNames = `(() => {
	const out = [];
	for (const c of document.querySelectorAll('h2 code, h3 code, li code, td code, th code, p code')) {
		if (!/^[\w.]+$/.test(c.textContent)) continue;
		const rects = [...c.getClientRects()];
		const box = c.parentElement.getBoundingClientRect().width;
		const total = rects.reduce((w, r) => w + r.width, 0);
		if (rects.length > 1 && total < box) out.push(c.textContent + ' (' + rects.length + ' pieces, ' + Math.round(total) + ' of ' + Math.round(box) + ' px)');
	}
	return out;
})()`

// phoneWidth is the viewport no page may be wider than.
const phoneWidth = 375

// browser finds Chromium: $CHROME, or chromium / chromium-browser /
// google-chrome on PATH.
func browser(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	tb.Fatal("no Chromium found (make e2e installs Debian's chromium; or set CHROME)")
	return ""
}

// problems collects what the browser reports: failed requests, error
// responses, log entries above info, exceptions.
type problems struct {
	mu   sync.Mutex
	list []string
}

func (p *problems) add(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

func (p *problems) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.list
	p.list = nil
	return out
}

// pageInfo is what the test reads from each loaded page.
type pageInfo struct {
	URL         string   `json:"url"`
	Title       string   `json:"title"`
	ScrollWidth int      `json:"scrollWidth"`
	InnerWidth  int      `json:"innerWidth"`
	IDs         []string `json:"ids"`
	Links       []string `json:"links"`
	Next        string   `json:"next"`
	H1          string   `json:"h1"`
}

const readPage = `(() => ({
	url: location.href,
	title: document.title,
	scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
	innerWidth: window.innerWidth,
	ids: [...document.querySelectorAll('[id]')].map(e => e.id),
	links: [...document.querySelectorAll('a[href]')].map(a => a.href),
	next: (document.querySelector('a[rel=next]') || {}).href || "",
	h1: (document.querySelector('h1') || {}).textContent || "",
}))()`

func TestSiteInABrowser(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := site.Build(site.Config{Root: root, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	base, _ := url.Parse(srv.URL + "/")

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-sandbox", true), // Chromium as root (CI) needs it
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelTimeout()

	var probs problems
	// Open the tab first, so that the listener misses nothing of the pages.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	err = chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *network.EventLoadingFailed:
			probs.add("request failed: %s (%s)", ev.RequestID, ev.ErrorText)
		case *network.EventResponseReceived:
			if ev.Response.Status >= 400 {
				probs.add("HTTP %d for %s", ev.Response.Status, ev.Response.URL)
			}
		case *cdplog.EventEntryAdded:
			if l := ev.Entry.Level; l != cdplog.EntryLevelVerbose && l != cdplog.EntryLevelInfo {
				probs.add("browser log %s: %s (%s)", l, ev.Entry.Text, ev.Entry.URL)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				probs.add("console %s", ev.Type)
			}
		case *runtime.EventExceptionThrown:
			probs.add("exception: %s", ev.ExceptionDetails.Text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(phoneWidth, 800, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}

	load := func(u string) pageInfo {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady("body")); err != nil {
			t.Fatalf("load %s: %v", u, err)
		}
		return read(t, ctx)
	}

	// Every page renders, fits a phone and reports no problem.
	pages := map[string]pageInfo{}
	files := []string{"index.html"}
	for _, p := range res.Pages {
		files = append(files, p.File)
	}
	for _, f := range files {
		u := base.ResolveReference(&url.URL{Path: f}).String()
		info := load(u)
		pages[f] = info
		if info.H1 == "" {
			t.Errorf("%s: no heading rendered", f)
		}
		if info.ScrollWidth > phoneWidth {
			t.Errorf("%s: %d px wide in a %d px viewport", f, info.ScrollWidth, phoneWidth)
		}
		broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](brokenNames))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range broken {
			t.Errorf("%s at %d px: a name broken although it fits a line: %s", f, phoneWidth, b)
		}
		for _, p := range probs.take() {
			t.Errorf("%s: %s", f, p)
		}
	}

	// Every link and anchor resolves.
	links, anchors := 0, 0
	for f, info := range pages {
		for _, l := range info.Links {
			lu, err := url.Parse(l)
			if err != nil || lu.Host != base.Host {
				continue // external: counted by site.CheckLinks, not fetched on a closed network
			}
			links++
			target := strings.TrimPrefix(lu.Path, "/")
			tp, ok := pages[target]
			if !ok {
				t.Errorf("%s links to %s, which is not a page of the site", f, l)
				continue
			}
			if lu.Fragment != "" {
				anchors++
				found := false
				for _, id := range tp.IDs {
					found = found || id == lu.Fragment
				}
				if !found {
					t.Errorf("%s links to %s, whose page has no such anchor", f, l)
				}
			}
		}
	}

	// Navigation: from the contents into the first page, then "next"
	// through the whole course, by clicking.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/index.html"), chromedp.WaitReady("ol.contents"),
		chromedp.Click("ol.contents > li > a", chromedp.NodeVisible), chromedp.WaitReady("nav")); err != nil {
		t.Fatalf("click into the course: %v", err)
	}
	if info := read(t, ctx); !strings.HasSuffix(info.URL, "/"+res.Pages[0].File) {
		t.Errorf("the first contents entry went to %s, want %s", info.URL, res.Pages[0].File)
	}
	visited := 1
	for {
		info := read(t, ctx)
		if info.Next == "" {
			break
		}
		if err := chromedp.Do(ctx, chromedp.Click("nav a[rel=next]", chromedp.NodeVisible)); err != nil {
			t.Fatalf("click next on %s: %v", info.URL, err)
		}
		next := waitLeave(t, ctx, info.URL)
		if next != info.Next {
			t.Fatalf("next on %s went to %s, want %s", info.URL, next, info.Next)
		}
		visited++
		if visited > len(res.Pages)+1 {
			t.Fatal("next never ends")
		}
	}
	if visited != len(res.Pages) {
		t.Errorf("clicking next from the first page visited %d pages, want all %d", visited, len(res.Pages))
	}
	for _, p := range probs.take() {
		t.Errorf("while navigating: %s", p)
	}

	// A phone-width screenshot of a chapter, kept as an artefact.
	out := os.Getenv("E2E_ARTIFACTS")
	if out == "" {
		out = filepath.Join(root, ".labkit", "e2e")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/01-claim.html"), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(80))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(out, "01-claim-phone.jpg")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	// And the first screen, as a reader on a phone sees it.
	screen, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(out, "01-claim-phone-screen.png"), screen, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pages rendered at %d px, %d internal links and %d anchors resolve, %d pages by next; screenshot %s", len(pages), phoneWidth, links, anchors, visited, shot)
}

// read reads the loaded page.
func read(tb testing.TB, ctx context.Context) pageInfo {
	tb.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](readPage))
	if err != nil {
		tb.Fatalf("read the page: %v", err)
	}
	var info pageInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		tb.Fatalf("read the page: %v", err)
	}
	return info
}

// waitLeave waits until the tab has left the page from and finished
// loading the next one, and returns its address.
func waitLeave(tb testing.TB, ctx context.Context, from string) string {
	tb.Helper()
	for {
		loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === "complete" ? location.href : ""`))
		if err != nil {
			tb.Fatalf("wait for the next page: %v", err)
		}
		if loc != "" && loc != from {
			return loc
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("the click on next never left %s", from)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
