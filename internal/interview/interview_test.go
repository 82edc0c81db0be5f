package interview

import (
	"bufio"
	"strings"
	"testing"
)

// TestReadAnswer: an answer ends at an empty line or at the end of the
// input, and what follows is left to read.
func TestReadAnswer(t *testing.T) {
	in := bufio.NewReader(strings.NewReader("first line\r\nsecond\n\n1 2\n"))
	if got := readAnswer(in); got != "first line\nsecond" {
		t.Errorf("readAnswer = %q, want the two lines", got)
	}
	if rest, _ := in.ReadString('\n'); rest != "1 2\n" {
		t.Errorf("after the answer: %q, want the next line", rest)
	}
	if got := readAnswer(bufio.NewReader(strings.NewReader("no newline"))); got != "no newline" {
		t.Errorf("readAnswer at the end of the input = %q", got)
	}
}

// TestPatchedCode: the code a patch produces, without its headers or any
// mark of which lines changed.
func TestPatchedCode(t *testing.T) {
	diff := "diff --git a/x.go b/x.go\nindex 1..2\n--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n func f() {\n-\treturn 1\n+\treturn 2\n"
	want := "── x.go ──\n    ...\n    func f() {\n    \treturn 2\n"
	if got := patchedCode(diff); got != want {
		t.Errorf("patchedCode =\n%q\nwant\n%q", got, want)
	}
}
