// Package attest is the grader's half of the suites' signed verdicts: the
// format of an attestation line and its verification. It signs nothing and
// holds no key; the signer lives in suites/internal/sign, which only the
// suites can import.
//
// Student code runs in the same process as the suite and can print lines
// that look like test results, or like attestations. What it cannot do is
// produce a valid one: the key is fresh for every run of the test binary,
// read and deleted before the student's code starts, and kept where no
// import a lab may use can reach it (docs/instructors.md, "What a
// signature proves"). A line that carries the prefix and a wrong signature
// is evidence of tampering, not noise: the grader voids the run.
package attest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// EnvFile names the environment variable that holds the key file's path.
const EnvFile = "LABKIT_ATTEST_FILE"

// Prefix starts every attestation line.
const Prefix = "labkit-attest "

// Kind says what Verify found in a line.
type Kind int

// The kinds of line.
const (
	// None: the line carries no attestation.
	None Kind = iota
	// Valid: an attestation signed under the key.
	Valid
	// Invalid: the line carries the attestation prefix, but it is
	// malformed or its signature is wrong.
	Invalid
)

// Result is what Verify found in one line of output.
type Result struct {
	Kind   Kind
	Test   string // the test the attestation names (Valid only)
	Passed bool   // its verdict (Valid only)
}

// Verify checks the attestation in a line of output under key.
func Verify(key []byte, line string) Result {
	i := strings.Index(line, Prefix)
	if i < 0 {
		return Result{}
	}
	f := strings.Fields(line[i+len(Prefix):])
	if len(f) != 3 || (f[1] != "pass" && f[1] != "fail") {
		return Result{Kind: Invalid}
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(f[0] + "\x00" + f[1]))
	want := hex.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(f[2])) {
		return Result{Kind: Invalid}
	}
	return Result{Kind: Valid, Test: f[0], Passed: f[1] == "pass"}
}
