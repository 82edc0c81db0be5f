package attest

import "testing"

func TestVerify(t *testing.T) {
	k := []byte("0123456789abcdef")
	for _, tc := range []struct {
		line string
		want Kind
	}{
		{"--- PASS: TestClaim/a_case (0.00s)", None},
		{"    suites.go:1: " + Prefix + "TestClaim/a pass 00", Invalid},
		{Prefix + "TestClaim/a maybe 00", Invalid},
		{Prefix + "TestClaim/a", Invalid},
		{Prefix, Invalid},
	} {
		if got := Verify(k, tc.line).Kind; got != tc.want {
			t.Errorf("Verify(%q).Kind = %v, want %v", tc.line, got, tc.want)
		}
	}
}
