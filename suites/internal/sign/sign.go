// Package sign signs a suite's verdicts for the grader. It lives under
// suites/internal so that only the suites can import it: the Go compiler
// refuses the import to a lab's package, and the grader refuses, before the
// build, every import a lab's registry entry does not list.
//
// The grader writes a fresh random key to a file and names it in the
// environment variable attest.EnvFile; this package's init, which runs
// before any code of the package under test (the lab package depends on the
// suite, so the suite's dependencies are initialised first), reads the key,
// deletes the file and clears the variable. The key is held only in an
// unexported variable of this package. After each case, the suite logs the
// case's record (package attest): its name, verdict and what the suite saw,
// signed with an HMAC under the key, which the grader checks.
//
// Without the key, the record is logged unsigned when attest.RecordsEnv is
// set to 1 (labctl check on the learner's machine), and not at all
// otherwise (go test in an editor, which shows the failure report as text
// instead).
package sign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/fourth-outcome/labkit/attest"
)

var (
	key     []byte
	records bool // records were asked for without a key
)

func init() {
	records = os.Getenv(attest.RecordsEnv) == "1"
	path := os.Getenv(attest.EnvFile)
	if path == "" {
		return
	}
	key, _ = os.ReadFile(path)
	os.Remove(path)
	os.Unsetenv(attest.EnvFile)
}

// Enabled reports whether Case logs anything: whether the grader reads the
// cases' records, so the suite need not print its failure report as text.
func Enabled() bool { return len(key) > 0 || records }

// Case logs on t the record of t's subtest name, r (whose Test it sets):
// signed under the key, unsigned when records were asked for without one.
// It does nothing when neither.
func Case(t testing.TB, name string, r attest.Record) {
	t.Helper()
	if !Enabled() {
		return
	}
	r.Test = t.Name() + "/" + name
	t.Log(line(key, r))
}

// line is the record line of r under k, in the format attest.Verify
// checks; unsigned when k is empty.
func line(k []byte, r attest.Record) string {
	if len(k) == 0 {
		return attest.Line(r, attest.Unsigned)
	}
	m := hmac.New(sha256.New, k)
	m.Write(attest.Message(attest.Encode(r)))
	return attest.Line(r, hex.EncodeToString(m.Sum(nil)))
}
