package grader

import "testing"

func TestThreadStat(t *testing.T) {
	for _, tt := range []struct {
		stat  string
		state string
		cpu   int64
		ok    bool
	}{
		{"4242 (claim.test) R 1 4242 4242 0 -1 4194560 1203 0 0 0 731 12 0 0 20 0 6 0 1234 0 0", "R", 743, true},
		{"4243 (a) b) c) S 1 4242 4242 0 -1 4194560 1203 0 0 0 5 7 0 0 20 0 6 0 1234 0 0", "S", 12, true},
		{"4244 (short) R 1 2", "", 0, false},
		{"no parenthesis", "", 0, false},
	} {
		state, cpu, ok := threadStat(tt.stat)
		if state != tt.state || cpu != tt.cpu || ok != tt.ok {
			t.Errorf("threadStat(%q) = %q, %d, %v, want %q, %d, %v", tt.stat, state, cpu, ok, tt.state, tt.cpu, tt.ok)
		}
	}
}
