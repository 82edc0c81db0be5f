// Package attest lets a suite prove its results to the grader. Student code
// runs in the same process as the suite and can print lines that look like
// test results; what it cannot do is sign them. The grader writes a fresh
// random key to a file and names it in LABKIT_ATTEST_FILE; this package's
// init, which runs before any code of the package under test, reads the key,
// deletes the file and clears the variable. After each case the suite
// prints Line for it, an HMAC of the case's name and verdict under the key,
// and the grader counts a case as passed only with a valid line.
//
// Without the variable (labctl check, go test in an editor) nothing is
// printed.
package attest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// EnvFile names the file holding the key.
const EnvFile = "LABKIT_ATTEST_FILE"

// Prefix starts every attestation line.
const Prefix = "labkit-attest "

var key []byte

func init() {
	path := os.Getenv(EnvFile)
	if path == "" {
		return
	}
	key, _ = os.ReadFile(path)
	os.Remove(path)
	os.Unsetenv(EnvFile)
}

// Case logs on t the attestation of the subtest name of t: whether it
// passed. It does nothing without a key.
func Case(t testing.TB, name string, passed bool) {
	t.Helper()
	if len(key) == 0 {
		return
	}
	t.Log(Line(key, t.Name()+"/"+name, passed))
}

// Line is the attestation of one test's verdict under key.
func Line(key []byte, test string, passed bool) string {
	verdict := "fail"
	if passed {
		verdict = "pass"
	}
	return Prefix + test + " " + verdict + " " + sign(key, test, verdict)
}

func sign(key []byte, test, verdict string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(test + "\x00" + verdict))
	return hex.EncodeToString(m.Sum(nil))
}

// Parse finds an attestation in a line of output and checks it under key:
// the test it names and whether it passed. ok is false for a line that is
// no attestation or whose signature is wrong.
func Parse(key []byte, line string) (test string, passed, ok bool) {
	i := strings.Index(line, Prefix)
	if i < 0 {
		return "", false, false
	}
	f := strings.Fields(line[i+len(Prefix):])
	if len(f) != 3 || (f[1] != "pass" && f[1] != "fail") {
		return "", false, false
	}
	want := sign(key, f[0], f[1])
	if !hmac.Equal([]byte(want), []byte(f[2])) {
		return "", false, false
	}
	return f[0], f[1] == "pass", true
}
