package watch

import (
	"strings"
	"testing"

	"github.com/fsnotify/fsnotify"

	"github.com/fourth-outcome/labkit/course"
)

// TestRelevant: a Go file saved re-runs the check; an editor's swap or
// backup file, or a file that is not Go, does not.
func TestRelevant(t *testing.T) {
	for _, tt := range []struct {
		name string
		op   fsnotify.Op
		want bool
	}{
		{"labs/01-claim/claim.go", fsnotify.Write, true},
		{"labs/01-claim/claim.go", fsnotify.Rename, true},
		{"labs/01-claim/claim.go", fsnotify.Chmod, false},
		{"labs/01-claim/.claim.go.swp", fsnotify.Write, false},
		{"labs/01-claim/claim.go~", fsnotify.Write, false},
		{"labs/01-claim/README.md", fsnotify.Write, false},
	} {
		if got := relevant(fsnotify.Event{Name: tt.name, Op: tt.op}); got != tt.want {
			t.Errorf("relevant(%s %v) = %v, want %v", tt.name, tt.op, got, tt.want)
		}
	}
}

// TestReadKeys: each key typed is one lower-cased key; spaces and line
// ends are skipped; the end of the input closes the channel.
func TestReadKeys(t *testing.T) {
	keys := make(chan string)
	go readKeys(strings.NewReader("h\nC q"), keys, make(chan struct{}))
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	if strings.Join(got, ",") != "h,c,q" {
		t.Errorf("readKeys = %q, want h, c, q", got)
	}
}

// TestNextLab: the lab after the first is the second; there is none
// after the last.
func TestNextLab(t *testing.T) {
	built := course.Built()
	if next, ok := nextLab(built[0].Lab); !ok || next.Number != built[1].Number {
		t.Errorf("nextLab(%s) = %s, %v; want %s", built[0].Dir, next.Dir, ok, built[1].Dir)
	}
	if _, ok := nextLab(built[len(built)-1].Lab); ok {
		t.Errorf("nextLab(the last lab) found one")
	}
}
