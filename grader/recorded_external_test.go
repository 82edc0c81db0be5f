package grader_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	. "github.com/fourth-outcome/labkit/grader"
)

var updateStreams = flag.Bool("update-streams", false, "rewrite testdata/streams/*.golden from the recorded streams")

// recordedKey is the key testdata/streams/record.sh signs its runs with.
var recordedKey = []byte("recorded-stream-key")

// summary is what a golden file keeps of a report: every field a verdict
// depends on, and none that varies between runs of the same program
// (elapsed times, the order of goroutines in a dump).
func summary(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "score %d/%d passed=%v race=%v\n", rep.Score(), rep.Total, rep.Passed, rep.Race)
	if rep.Tampered != "" {
		fmt.Fprintf(&b, "tampered: %s\n", rep.Tampered)
	}
	if rep.Build != nil {
		for _, e := range rep.Build.Errors {
			fmt.Fprintf(&b, "compile error %s:%d: %s\n", e.File, e.Line, e.Message)
		}
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(&b, "problem: %s\n", strings.SplitN(p, "\n", 2)[0])
	}
	for _, c := range rep.Cases {
		fmt.Fprintf(&b, "%-16s %2d/%-2d %s\n", c.Status, c.Earned, c.Points, c.Name)
		if c.Status != StatusPass && len(c.Output) > 0 {
			fmt.Fprintf(&b, "    %s\n", c.Output[0])
		}
		if len(c.Timeline) > 0 {
			// From the suite's record, which test2json cut into 1 KiB
			// pieces when it was long.
			fmt.Fprintf(&b, "    timeline: %d lines on the %s clock, from %q\n", len(c.Timeline), c.Clock, c.Timeline[0])
		}
	}
	return b.String()
}

// TestRecordedStreams parses real go test -json streams of lab 01's suite
// (recorded by testdata/streams/record.sh, not written by hand) and
// compares each report with its golden summary, so that the parser is
// tested on what go test, test2json and the suite actually print.
func TestRecordedStreams(t *testing.T) {
	streams, err := filepath.Glob("testdata/streams/*.json")
	if err != nil || len(streams) == 0 {
		t.Fatalf("no recorded streams in testdata/streams (%v)", err)
	}
	lab := claimLab(t)
	for _, path := range streams {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rep := ParseRecordedForTest(lab, "/kit/labs/01-claim", recordedKey, bytes.NewReader(data), true)
			got := summary(rep)
			golden := strings.TrimSuffix(path, ".json") + ".golden"
			if *updateStreams {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./grader -run TestRecordedStreams -update-streams writes it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("report of %s differs from %s (-want +got):\n%s", path, golden, diff)
			}
		})
	}
}

// TestRecordedStreamTamperedWith changes one byte of one signature in the
// solution's real stream, and drops one case's signed pass: either voids
// the run.
func TestRecordedStreamTamperedWith(t *testing.T) {
	data, err := os.ReadFile("testdata/streams/01-solution.json")
	if err != nil {
		t.Fatal(err)
	}
	lab := claimLab(t)
	if rep := ParseRecordedForTest(lab, "/kit/labs/01-claim", recordedKey, bytes.NewReader(data), true); rep.Score() != rep.Total || rep.Tampered != "" {
		t.Fatalf("the solution's stream scores %d/%d (tampered %q), want %d/%d", rep.Score(), rep.Total, rep.Tampered, rep.Total, rep.Total)
	}
	i := bytes.Index(data, []byte("labkit-attest "))
	if i < 0 {
		t.Fatal("the solution's stream has no attestation")
	}
	forged := bytes.Clone(data)
	sig := i + bytes.IndexByte(forged[i:], '\\') - 1 // the signature's last hex digit, before the line's \n
	if forged[sig] == '0' {
		forged[sig] = '1'
	} else {
		forged[sig] = '0'
	}
	rep := ParseRecordedForTest(lab, "/kit/labs/01-claim", recordedKey, bytes.NewReader(forged), true)
	if rep.Score() != 0 || rep.Tampered == "" {
		t.Errorf("a stream with one signature changed scores %d/%d (tampered %q), want 0 and tampered", rep.Score(), rep.Total, rep.Tampered)
	}
	rep = ParseRecordedForTest(lab, "/kit/labs/01-claim", []byte("another key"), bytes.NewReader(data), true)
	if rep.Score() != 0 || rep.Tampered == "" {
		t.Errorf("the solution's stream checked under another key scores %d/%d (tampered %q), want 0 and tampered", rep.Score(), rep.Total, rep.Tampered)
	}
}
