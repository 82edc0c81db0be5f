package attest

import "testing"

func TestLineParses(t *testing.T) {
	k := []byte("0123456789abcdef")
	line := "    suites.go:97: " + Line(k, "TestClaim/a_case", true)
	test, passed, ok := Parse(k, line)
	if !ok || test != "TestClaim/a_case" || !passed {
		t.Errorf("Parse(Line(pass)) = %q, %v, %v; want TestClaim/a_case, true, true", test, passed, ok)
	}
	if _, _, ok := Parse([]byte("another key"), line); ok {
		t.Error("Parse() with another key = ok, want a forged line refused")
	}
	forged := Line(k, "TestClaim/a_case", false)
	forged = forged[:len(Prefix)] + "TestClaim/a_case pass" + forged[len(Prefix)+len("TestClaim/a_case fail"):]
	if _, _, ok := Parse(k, forged); ok {
		t.Error("Parse() of a fail line edited to pass = ok, want it refused")
	}
	if _, _, ok := Parse(k, "--- PASS: TestClaim/a_case (0.00s)"); ok {
		t.Error("Parse() of a plain result line = ok, want false")
	}
}
