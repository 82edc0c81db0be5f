package grader

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/attest"
)

// signedLine is the attestation the suite's signer (suites/internal/sign)
// logs for test under key: the grader's tests make their own, since no
// importable package signs.
func signedLine(key []byte, test string, passed bool) string {
	r := attest.Record{Test: test, Passed: passed, Clock: attest.ClockVirtual}
	m := hmac.New(sha256.New, key)
	m.Write(attest.Message(attest.Encode(r)))
	return attest.Line(r, hex.EncodeToString(m.Sum(nil)))
}

// gradeSigned parses one run of twoCases signed under key, with lines
// printed after both cases ended, and returns the finalized report.
func gradeSigned(t *testing.T, key []byte, events string, lines ...string) *Report {
	t.Helper()
	p := newParser(twoCases, "/kit/labs/01-claim", nil)
	p.newAttempt(key)
	var out []string
	for _, l := range lines {
		out = append(out, "    suites.go:117: "+l)
	}
	p.consume(strings.NewReader(events + outputEvents(t, "TestClaim", out...)))
	p.endAttempt(runEnd{exited: true})
	rep := p.report("")
	confirmAttested(p, rep)
	rep.Race = true
	rep.Finalize(twoCases)
	return rep
}

func TestAttestation(t *testing.T) {
	key := []byte("this run's key")
	bothPass := stream(t, "run TestClaim", "run TestClaim/a", "pass TestClaim/a", "run TestClaim/b", "pass TestClaim/b", "pass TestClaim")
	aFails := stream(t, "run TestClaim", "run TestClaim/a", "fail TestClaim/a", "run TestClaim/b", "pass TestClaim/b", "fail TestClaim")
	a, b := signedLine(key, "TestClaim/a", true), signedLine(key, "TestClaim/b", true)
	for _, tc := range []struct {
		name      string
		events    string
		lines     []string
		score     int
		tampered  bool
		wantWords string // in Tampered
	}{
		{name: "both signed", events: bothPass, lines: []string{a, b}, score: 100},
		{name: "one unsigned pass fails", events: bothPass, lines: []string{a}, score: 50},
		{name: "a signed failure stays a failure", events: aFails, lines: []string{signedLine(key, "TestClaim/a", false), b}, score: 50},
		{name: "a guessed signature voids the run", events: bothPass, lines: []string{a, b, attest.Prefix + "TestClaim/b pass " + strings.Repeat("0", 64)},
			tampered: true, wantWords: "did not sign"},
		{name: "a signature under another key voids the run", events: bothPass, lines: []string{a, signedLine([]byte("a guess"), "TestClaim/b", true)},
			tampered: true, wantWords: "did not sign"},
		{name: "a malformed attestation voids the run", events: bothPass, lines: []string{a, b, attest.Prefix + "TestClaim/b pass"},
			tampered: true, wantWords: "did not sign"},
		{name: "an unsigned record in a signed run voids the run", events: bothPass, lines: []string{a, attest.Line(attest.Record{Test: "TestClaim/b", Passed: true}, attest.Unsigned)},
			tampered: true, wantWords: "did not sign"},
		{name: "a duplicated signature voids the run", events: bothPass, lines: []string{a, b, b},
			tampered: true, wantWords: "appears twice"},
		{name: "a signed failure reported passed voids the run", events: bothPass, lines: []string{signedLine(key, "TestClaim/a", false), b},
			tampered: true, wantWords: "signed it failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := gradeSigned(t, key, tc.events, tc.lines...)
			if rep.Score() != tc.score {
				t.Errorf("Score = %d, want %d (statuses %v)", rep.Score(), tc.score, []Status{rep.Cases[0].Status, rep.Cases[1].Status})
			}
			if got := rep.Tampered != ""; got != tc.tampered || !strings.Contains(rep.Tampered, tc.wantWords) {
				t.Errorf("Tampered = %q, want tampered %v with %q", rep.Tampered, tc.tampered, tc.wantWords)
			}
			if tc.tampered && (rep.Passed || len(rep.Problems) == 0 || !strings.HasPrefix(rep.Problems[0], TamperedProblem)) {
				t.Errorf("tampered run: passed %v, problems %q; want not passed, %q first", rep.Passed, rep.Problems, TamperedProblem)
			}
		})
	}
}

// TestForgedAttestationInACaseVoidsTheRun: a forged attestation that
// test2json attributes to a case (it follows that case's framing) is
// checked like any other.
func TestForgedAttestationInACaseVoidsTheRun(t *testing.T) {
	key := []byte("this run's key")
	p := newParser(twoCases, "/kit/labs/01-claim", nil)
	p.newAttempt(key)
	p.consume(strings.NewReader(stream(t, "run TestClaim", "run TestClaim/a") +
		outputEvents(t, "TestClaim/a", "    suites.go:117: "+attest.Prefix+"TestClaim/a pass "+strings.Repeat("ab", 32))))
	if p.tampered == "" {
		t.Error("a forged attestation in a case's output: tampered = \"\", want the run void")
	}
}
