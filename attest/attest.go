// Package attest is the grader's half of the suites' per-case records: the
// format of a record line (an attestation) and its verification. After each
// case the suite writes one line holding the case's verdict and a Record of
// it as plain data (its timeline and the clock it ran on, its seed, whether
// it was inconclusive or recovered a panic), so the grader reads data, not
// the suite's prose. In a graded run the line is signed; attest verifies
// the signature and holds no key; the signer lives in suites/internal/sign,
// which only the suites can import.
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
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// EnvFile names the environment variable that holds the key file's path.
const EnvFile = "LABKIT_ATTEST_FILE"

// RecordsEnv names the environment variable that, set to 1, asks the
// suites for a record line after every case when the run has no key
// (labctl check on the learner's own machine): the lines are then unsigned,
// and the grader reads them with Read.
const RecordsEnv = "LABKIT_RECORDS"

// Prefix starts every attestation line.
const Prefix = "labkit-attest "

// Unsigned stands for the signature of a record written without a key.
const Unsigned = "-"

// Clocks a case runs on (Record.Clock).
const (
	ClockVirtual = "virtual" // a testing/synctest bubble: the same on every run
	ClockReal    = "real"    // the real clock (a real Redis server): differs between runs
)

// Record is what the suite says of one case, as data.
type Record struct {
	Test   string `json:"-"` // the case's full test name
	Passed bool   `json:"-"` // its verdict

	// Clock is the clock the case ran on, ClockVirtual or ClockReal.
	Clock string `json:"clock,omitempty"`
	// Seed is the seed the case drew its randomness from, when it drew
	// any, and Replay the command that replays it.
	Seed   *int64 `json:"seed,omitempty"`
	Replay string `json:"replay,omitempty"`
	// Timeline is the case's history as lines ("t=0s  worker A  Do(k1) ->
	// ..."), kept for a case that failed.
	Timeline []string `json:"timeline,omitempty"`
	// Inconclusive, when set, says why the case could not decide and
	// skipped itself: it is not a pass.
	Inconclusive string `json:"inconclusive,omitempty"`
	// Panicked says the suite recovered a panic in the case (in the code
	// under test or in the check), which failed it.
	Panicked bool `json:"panicked,omitempty"`
}

// Kind says what Verify or Read found in a line.
type Kind int

// The kinds of line.
const (
	// None: the line carries no attestation.
	None Kind = iota
	// Valid: an attestation signed under the key (Verify), or a well
	// formed one (Read).
	Valid
	// Invalid: the line carries the attestation prefix, but it is
	// malformed or its signature is wrong.
	Invalid
)

// Result is what Verify or Read found in one line of output.
type Result struct {
	Kind   Kind
	Test   string // the test the attestation names (Valid only)
	Passed bool   // its verdict (Valid only)
	Record Record // the case's record (Valid only), Test and Passed included
}

// Encode returns the fields of r's line that a signature covers: its test,
// its verdict and its payload.
func Encode(r Record) (test, verdict, payload string) {
	verdict = "fail"
	if r.Passed {
		verdict = "pass"
	}
	data, _ := json.Marshal(r) // a Record always marshals
	return r.Test, verdict, base64.RawURLEncoding.EncodeToString(data)
}

// Message is the byte string a record line's signature is the HMAC-SHA256
// of, under the run's key.
func Message(test, verdict, payload string) []byte {
	return []byte(test + "\x00" + verdict + "\x00" + payload)
}

// Line is the record line of r with signature sig (hex, or Unsigned).
func Line(r Record, sig string) string {
	test, verdict, payload := Encode(r)
	return Prefix + test + " " + verdict + " " + payload + " " + sig
}

// Verify checks the attestation in a line of output under key.
func Verify(key []byte, line string) Result {
	res, f := parse(line)
	if res.Kind != Valid {
		return res
	}
	m := hmac.New(sha256.New, key)
	m.Write(Message(f[0], f[1], f[2]))
	want := hex.EncodeToString(m.Sum(nil))
	if len(key) == 0 || !hmac.Equal([]byte(want), []byte(f[3])) {
		return Result{Kind: Invalid}
	}
	return res
}

// Read reads the record in a line of output without checking its
// signature: for a run that had no key, whose lines are Unsigned.
func Read(line string) Result {
	res, _ := parse(line)
	return res
}

// parse splits an attestation line into its four fields and decodes its
// record.
func parse(line string) (Result, []string) {
	i := strings.Index(line, Prefix)
	if i < 0 {
		return Result{}, nil
	}
	f := strings.Fields(line[i+len(Prefix):])
	if len(f) != 4 || (f[1] != "pass" && f[1] != "fail") {
		return Result{Kind: Invalid}, nil
	}
	data, err := base64.RawURLEncoding.DecodeString(f[2])
	if err != nil {
		return Result{Kind: Invalid}, nil
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Result{Kind: Invalid}, nil
	}
	r.Test, r.Passed = f[0], f[1] == "pass"
	return Result{Kind: Valid, Test: r.Test, Passed: r.Passed, Record: r}, f
}
