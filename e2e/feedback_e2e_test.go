//go:build e2e

package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/feedback"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/render"
)

// feedbackTimeline is lab 01's timeline for a first attempt that keeps a
// key whose work failed with a context error, as check prints it.
var feedbackTimeline = []string{
	`t=0s       worker A          the work for "k1" starts -> its first execution`,
	`t=0s       worker A          Do("k1") -> returned "", error card declined`,
	`t=1m0s     worker A (retry)  the work for "k1" starts -> execution #2 of this key's work`,
	`t=1m0s     worker A (retry)  Do("k1") -> returned "signed:doc-42", nil`,
	`t=1m0s     worker A          the work for "k2" starts -> its first execution`,
	`t=1m0s     worker A          Do("k2") -> returned "", error dial provider: context deadline exceeded`,
	`t=2m0s     worker A (retry)  Do("k2") -> returned "", in progress (do "k2": claim: work for this key is in progress)`,
}

const readFeedback = `(() => {
	const narrow = ` + brokenNames + `;
	const figs = [...document.querySelectorAll('figure.timeline > svg')].map(svg => {
		const r = svg.getBoundingClientRect();
		return {left: r.left, right: r.right, width: r.width, title: (svg.querySelector('title') || {}).textContent || '', desc: (svg.querySelector('desc') || {}).textContent || ''};
	});
	return {innerWidth: window.innerWidth, scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth), narrow, figs};
})()`

// TestFeedbackPageInABrowser renders check --html's page for a failing
// lab 01 run (a diagnosis, a failing case with its timeline drawn as a
// sequence diagram, the passing cases) and opens it at a phone's 375 px and
// a desktop's 1280 px: the page is no wider than the viewport, no case name
// or other code span breaks into slivers, and the timeline's diagram is
// inside the viewport with a title and a description. A phone-width
// screenshot is kept in $E2E_ARTIFACTS.
func TestFeedbackPageInABrowser(t *testing.T) {
	lab, err := course.Find("1")
	if err != nil {
		t.Fatal(err)
	}
	rep := &grader.Report{Lab: lab.Number, Slug: lab.Slug, Title: lab.Title, Total: lab.TotalPoints(), Race: true, Target: "labs/01-claim"}
	for _, c := range lab.Cases {
		cr := grader.CaseResult{Name: c.Name, Concept: c.Concept, Points: c.Points, Explanation: c.Explanation, Status: grader.StatusPass}
		switch c.Name {
		case "failed_execution_releases_key":
			cr.Status = grader.StatusFail
			cr.Output = []string{`retry Do("k2") after the work failed with "dial provider: context deadline exceeded" = "", do "k2": claim: work for this key is in progress, want "signed:doc-42", nil (the key must be released, whatever the error)`}
			cr.Timeline = feedbackTimeline
		case "random_call_sequences_follow_the_rules":
			cr.Status = grader.StatusFail
			cr.Output = []string{`Do("k") after its work failed with a context error = in progress, want its work run (R5)`}
		}
		rep.Cases = append(rep.Cases, cr)
	}
	rep.Finalize(lab.Lab)
	if rep.Diagnosis == nil {
		t.Fatalf("the run is not diagnosed; course/signatures/01-claim.json should name timeout-keeps-claim")
	}
	page, err := render.Page("Lab 01 feedback", feedback.Markdown(rep, lab.Lab, feedback.MarkdownOptions{TimelineFigures: true}))
	if err != nil {
		t.Fatal(err)
	}
	page = render.InlineTimelines(page, map[string][]string{"failed_execution_releases_key": feedbackTimeline})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "feedback.html"), page, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	ctx := figureBrowser(t)
	out := os.Getenv("E2E_ARTIFACTS")
	if out == "" {
		out = filepath.Join("..", ".labkit", "e2e")
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
		at := "feedback.html at " + strconv.FormatInt(vp.width, 10) + " px"
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(vp.width, 900, opts...), chromedp.Navigate(srv.URL+"/feedback.html"), chromedp.WaitReady("body")); err != nil {
			t.Fatalf("load %s: %v", at, err)
		}
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](readFeedback))
		if err != nil {
			t.Fatalf("read %s: %v", at, err)
		}
		var got struct {
			InnerWidth  float64  `json:"innerWidth"`
			ScrollWidth float64  `json:"scrollWidth"`
			Narrow      []string `json:"narrow"`
			Figs        []struct {
				Left, Right, Width float64
				Title, Desc        string
			} `json:"figs"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		viewport := float64(vp.width)
		if got.ScrollWidth > viewport {
			t.Errorf("%s: the page is %g px wide", at, got.ScrollWidth)
		}
		for _, n := range got.Narrow {
			t.Errorf("%s: a name broken although it fits a line: %s", at, n)
		}
		if len(got.Figs) != 1 {
			t.Fatalf("%s: %d timeline diagrams, want 1", at, len(got.Figs))
		}
		f := got.Figs[0]
		if f.Left < 0 || f.Right > viewport+0.5 || f.Width < 100 {
			t.Errorf("%s: the timeline diagram spans %g to %g px (%g wide) in a %g px viewport", at, f.Left, f.Right, f.Width, viewport)
		}
		if f.Title == "" || f.Desc == "" {
			t.Errorf("%s: the timeline diagram has title %q and description %q, want both", at, f.Title, f.Desc)
		}
		if vp.mobile {
			shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
			if err != nil {
				t.Fatalf("screenshot %s: %v", at, err)
			}
			if err := os.WriteFile(filepath.Join(out, "feedback-phone.png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %g px wide, no name broken, the timeline drawn %g px wide with a title and a description", at, got.ScrollWidth, f.Width)
	}
}
