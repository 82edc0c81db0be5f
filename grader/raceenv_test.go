package grader

import "testing"

func TestRaceEnv(t *testing.T) {
	for _, tt := range []struct{ current, want string }{
		{"", "GORACE=atexit_sleep_ms=0"},
		{"halt_on_error=1", "GORACE=halt_on_error=1 atexit_sleep_ms=0"},
		{"atexit_sleep_ms=50", "GORACE=atexit_sleep_ms=50"},
	} {
		if got := RaceEnv(tt.current); got != tt.want {
			t.Errorf("RaceEnv(%q) = %q, want %q", tt.current, got, tt.want)
		}
	}
}
