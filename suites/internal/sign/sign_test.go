package sign

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fourth-outcome/labkit/attest"
)

// TestLineVerifies: what the signer writes is what the grader's verifier
// accepts, under that key only, and for that verdict only.
func TestLineVerifies(t *testing.T) {
	k := []byte("0123456789abcdef0123456789abcdef")
	seed := int64(42)
	pass := attest.Record{Test: "TestClaim/a_case", Passed: true, Clock: attest.ClockVirtual, Seed: &seed, Timeline: []string{"t=0s  worker A  Do(k1) -> ran"}}
	l := "    suites.go:97: " + line(k, pass)
	if got := attest.Verify(k, l); got.Kind != attest.Valid || got.Test != "TestClaim/a_case" || !got.Passed {
		t.Errorf("Verify(line(pass)) = %+v, want a valid pass of TestClaim/a_case", got)
	} else if diff := cmp.Diff(pass, got.Record); diff != "" {
		t.Errorf("Verify(line(pass)).Record mismatch (-want +got):\n%s", diff)
	}
	if got := attest.Verify([]byte("another key"), l); got.Kind != attest.Invalid {
		t.Errorf("Verify() under another key = %+v, want Invalid", got)
	}
	failRec := attest.Record{Test: "TestClaim/a_case", Inconclusive: "no interleaving"}
	fail := line(k, failRec)
	forged := fail[:len(attest.Prefix)] + "TestClaim/a_case pass" + fail[len(attest.Prefix)+len("TestClaim/a_case fail"):]
	if got := attest.Verify(k, forged); got.Kind != attest.Invalid {
		t.Errorf("Verify() of a fail line edited to pass = %+v, want Invalid", got)
	}
	// The record is signed too: a line whose payload is another record's
	// (a timeline dropped, an inconclusive mark added) is not valid.
	other := line(k, attest.Record{Test: "TestClaim/a_case"})
	fields := strings.Fields(fail)
	swapped := strings.Replace(fail, fields[3], strings.Fields(other)[3], 1)
	if got := attest.Verify(k, swapped); got.Kind != attest.Invalid {
		t.Errorf("Verify() of a fail line with another record's payload = %+v, want Invalid", got)
	}
	if got := attest.Verify(k, fail); got.Kind != attest.Valid || got.Passed || got.Record.Inconclusive != "no interleaving" {
		t.Errorf("Verify(line(fail)) = %+v, want a valid, inconclusive fail", got)
	}
	if got := attest.Verify(k, line(nil, failRec)); got.Kind != attest.Invalid {
		t.Errorf("Verify() of an unsigned line = %+v, want Invalid", got)
	}
	if got := attest.Read(line(nil, failRec)); got.Kind != attest.Valid || got.Record.Inconclusive != "no interleaving" {
		t.Errorf("Read() of an unsigned line = %+v, want its record", got)
	}
}

// TestCaseWithoutKeyLogsNothing: with no key (labctl check, an editor's go
// test), nothing is logged.
func TestCaseWithoutKeyLogsNothing(t *testing.T) {
	saved := key
	key = nil
	t.Cleanup(func() { key = saved })
	savedRecords := records
	records = false
	t.Cleanup(func() { records = savedRecords })
	rec := &recorder{TB: t}
	Case(rec, "a", attest.Record{Passed: true})
	if len(rec.logs) != 0 {
		t.Errorf("Case() without a key logged %q, want nothing", rec.logs)
	}
	records = true
	Case(rec, "a", attest.Record{Passed: true})
	if len(rec.logs) != 1 || attest.Read(rec.logs[0]).Kind != attest.Valid || !strings.HasSuffix(rec.logs[0], " "+attest.Unsigned) {
		t.Errorf("Case() without a key, records asked for, logged %q, want one unsigned record", rec.logs)
	}
	rec.logs = nil
	records = false
	key = []byte("k")
	Case(rec, "a", attest.Record{Passed: true})
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
