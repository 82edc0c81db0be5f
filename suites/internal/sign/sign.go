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
// case's attestation: an HMAC of the case's name and verdict under the key,
// which the grader checks with package attest.
//
// Without the variable (labctl check, go test in an editor) nothing is
// logged.
package sign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/fourth-outcome/labkit/attest"
)

var key []byte

func init() {
	path := os.Getenv(attest.EnvFile)
	if path == "" {
		return
	}
	key, _ = os.ReadFile(path)
	os.Remove(path)
	os.Unsetenv(attest.EnvFile)
}

// Case logs on t the attestation of t's subtest name: whether it passed.
// It does nothing without a key.
func Case(t testing.TB, name string, passed bool) {
	t.Helper()
	if len(key) == 0 {
		return
	}
	t.Log(line(key, t.Name()+"/"+name, passed))
}

// line is the attestation of one test's verdict under k, in the format
// attest.Verify checks.
func line(k []byte, test string, passed bool) string {
	verdict := "fail"
	if passed {
		verdict = "pass"
	}
	m := hmac.New(sha256.New, k)
	m.Write([]byte(test + "\x00" + verdict))
	return attest.Prefix + test + " " + verdict + " " + hex.EncodeToString(m.Sum(nil))
}
