package sign

import (
	"testing"

	"github.com/fourth-outcome/labkit/attest"
)

// TestLineVerifies: what the signer writes is what the grader's verifier
// accepts, under that key only, and for that verdict only.
func TestLineVerifies(t *testing.T) {
	k := []byte("0123456789abcdef0123456789abcdef")
	l := "    suites.go:97: " + line(k, "TestClaim/a_case", true)
	if got := attest.Verify(k, l); got.Kind != attest.Valid || got.Test != "TestClaim/a_case" || !got.Passed {
		t.Errorf("Verify(line(pass)) = %+v, want a valid pass of TestClaim/a_case", got)
	}
	if got := attest.Verify([]byte("another key"), l); got.Kind != attest.Invalid {
		t.Errorf("Verify() under another key = %+v, want Invalid", got)
	}
	fail := line(k, "TestClaim/a_case", false)
	forged := fail[:len(attest.Prefix)] + "TestClaim/a_case pass" + fail[len(attest.Prefix)+len("TestClaim/a_case fail"):]
	if got := attest.Verify(k, forged); got.Kind != attest.Invalid {
		t.Errorf("Verify() of a fail line edited to pass = %+v, want Invalid", got)
	}
	if got := attest.Verify(k, line(k, "TestClaim/a_case", false)); got.Kind != attest.Valid || got.Passed {
		t.Errorf("Verify(line(fail)) = %+v, want a valid fail", got)
	}
}

// TestCaseWithoutKeyLogsNothing: with no key (labctl check, an editor's go
// test), nothing is logged.
func TestCaseWithoutKeyLogsNothing(t *testing.T) {
	saved := key
	key = nil
	t.Cleanup(func() { key = saved })
	rec := &recorder{TB: t}
	Case(rec, "a", true)
	if len(rec.logs) != 0 {
		t.Errorf("Case() without a key logged %q, want nothing", rec.logs)
	}
	key = []byte("k")
	Case(rec, "a", true)
	if len(rec.logs) != 1 || attest.Verify(key, rec.logs[0]).Kind != attest.Valid {
		t.Errorf("Case() with a key logged %q, want one valid attestation", rec.logs)
	}
}

type recorder struct {
	testing.TB
	logs []string
}

func (r *recorder) Log(args ...any) {
	for _, a := range args {
		r.logs = append(r.logs, a.(string))
	}
}
