package render

import (
	"strings"
	"testing"
)

func TestPageIsSafe(t *testing.T) {
	page, err := Page("t", "# Title\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	if strings.Contains(s, "<script>alert") {
		t.Error("raw HTML from the Markdown reached the page")
	}
	if !strings.Contains(s, "<table>") || !strings.Contains(s, `id="title"`) {
		t.Errorf("GFM table or heading id missing:\n%s", s)
	}
}

func TestInlineTimelines(t *testing.T) {
	md := "**Timeline** (virtual time):\n\n![Timeline of a_case as a sequence diagram](timelines/a_case.svg)\n\n" +
		"![Timeline of gone as a sequence diagram](timelines/gone.svg)\n"
	page, err := Page("feedback", md)
	if err != nil {
		t.Fatal(err)
	}
	got := string(InlineTimelines(page, map[string][]string{
		"a_case": {`t=0s  caller 1  Do("<k>") -> returned "v"`, `t=1s  test  clock moved`},
	}))
	for _, want := range []string{`<figure class="diagram timeline" id="timeline-a_case">`, "<svg", "Timeline of a_case", "&lt;k&gt;"} {
		if !strings.Contains(got, want) {
			t.Errorf("InlineTimelines() lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "timelines/") {
		t.Errorf("InlineTimelines() left a reference (one with no timeline must be dropped):\n%s", got)
	}
}
