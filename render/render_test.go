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
