package suites

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fourth-outcome/labkit/attest"
	"github.com/fourth-outcome/labkit/rubric"
)

// caseNotes holds, by the case's test name, what a running case's record
// will say beyond its verdict: whether it was inconclusive, whether the
// suite recovered a panic in it. A check (or a subtest of it) notes these
// through Inconclusive and Guard.
var caseNotes struct {
	sync.Mutex
	byName map[string]*caseNote
}

type caseNote struct {
	inconclusive string
	panicked     bool
}

// openCase starts the note of the case named name.
func openCase(name string) *caseNote {
	caseNotes.Lock()
	defer caseNotes.Unlock()
	if caseNotes.byName == nil {
		caseNotes.byName = map[string]*caseNote{}
	}
	n := &caseNote{}
	caseNotes.byName[name] = n
	return n
}

// closeCase ends the note of the case named name and returns what it says.
func closeCase(name string) caseNote {
	caseNotes.Lock()
	defer caseNotes.Unlock()
	n := caseNotes.byName[name]
	delete(caseNotes.byName, name)
	if n == nil {
		return caseNote{}
	}
	return *n
}

// noteCase applies f to the note of the case that the test named name
// belongs to (the case itself or one of its subtests), if one is open.
func noteCase(name string, f func(*caseNote)) {
	caseNotes.Lock()
	defer caseNotes.Unlock()
	for {
		if n := caseNotes.byName[name]; n != nil {
			f(n)
			return
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return
		}
		name = name[:i]
	}
}

// Inconclusive skips t, a case or one of its subtests, saying why the case
// could not decide (the machine interleaved too few calls, a checker ran out
// of time): not a pass and not a failure, and never a reason to fail a
// program that may be right. The skip message starts with
// rubric.InconclusiveMark for a reader of go test's output; the grader reads
// the case's record.
func Inconclusive(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	noteCase(t.Name(), func(n *caseNote) {
		if n.inconclusive == "" {
			n.inconclusive = why
		}
	})
	t.Skip(rubric.InconclusiveMark + " " + why)
}

// caseRecord is the record of a case that has just ended: its clock, its
// seed, its timeline when it failed, and its note.
func caseRecord(lab Lab, t *testing.T, h *History, note caseNote, bubble bool) attest.Record {
	r := attest.Record{Clock: attest.ClockReal, Inconclusive: note.inconclusive, Panicked: note.panicked}
	if bubble {
		r.Clock = attest.ClockVirtual
	}
	if seed, ok := seedOf(t); ok {
		r.Seed, r.Replay = &seed, replayCommand(int64(lab.Number), seed)
	}
	if t.Failed() {
		r.Timeline = h.Lines()
	}
	return r
}
