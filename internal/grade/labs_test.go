package grade

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/intake"
)

// kitRoot is the repository this test runs in.
func kitRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// writeTree writes files, by path under dir.
func writeTree(tb testing.TB, dir string, files map[string][]byte) {
	tb.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// pristineStarter is lab dir's pristine starter as the kit ships it in
// labs/, without its test file.
func pristineStarter(tb testing.TB, dir string) map[string][]byte {
	tb.Helper()
	l, err := course.Find(dir)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for name, data := range l.Starter {
		out[name] = []byte(data)
	}
	return out
}

func dirs(ls []course.Lab) string {
	var n []string
	for _, l := range ls {
		n = append(n, l.Dir)
	}
	return strings.Join(n, ",")
}

// TestPresentLabs: a lab whose files are the starter's, unchanged, is not
// present; a changed one is; with none changed, every lab is kept.
func TestPresentLabs(t *testing.T) {
	root := kitRoot(t)
	labs := course.Built()[:3]
	dir := t.TempDir()
	sub := intake.Submission{Student: "s", Labs: map[int]string{}}
	for _, l := range labs {
		d := filepath.Join(dir, l.Dir)
		writeTree(t, d, pristineStarter(t, l.Dir))
		sub.Labs[l.Number] = d
	}
	if got := dirs(presentLabs(root, labs, []intake.Submission{sub})); got != dirs(labs) {
		t.Errorf("presentLabs(only starters) = %s, want every lab: %s", got, dirs(labs))
	}
	writeTree(t, filepath.Join(dir, labs[1].Dir), map[string][]byte{"extra.go": []byte("package x\n")})
	if got := dirs(presentLabs(root, labs, []intake.Submission{sub})); got != labs[1].Dir {
		t.Errorf("presentLabs(lab %s changed) = %s, want %s alone", labs[1].Dir, got, labs[1].Dir)
	}
}

// TestParseLabs: --labs and grade's LAB take numbers, ranges, lists and
// the names check takes ("04-retry" is a lab, not a range).
func TestParseLabs(t *testing.T) {
	for spec, want := range map[string]string{
		"4":              "04-retry",
		"04-retry":       "04-retry",
		"retry,1":        "01-claim,04-retry",
		"1-2":            "01-claim,02-redis",
		"01-claim,2-3,3": "01-claim,02-redis,03-ambiguous",
	} {
		got, err := parseLabs(spec)
		if err != nil || dirs(got) != want {
			t.Errorf("parseLabs(%q) = %s, %v; want %s", spec, dirs(got), err, want)
		}
	}
	for _, bad := range []string{"4-1", "x-y", "99"} {
		if _, err := parseLabs(bad); err == nil {
			t.Errorf("parseLabs(%q) = nil error, want a usage error", bad)
		}
	}
}
