package opscmd

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"
	"time"
)

// TestExitCode: bad input is 2 and points at --help, even wrapped; --help
// and an interrupt are 0; anything else is 1; each says one line.
func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		code int
		line string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{fmt.Errorf("status: %w", context.Canceled), 0, ""},
		{Usagef("--jobs %d: want at least 1", 0), 2, "x: --jobs 0: want at least 1 (x --help for usage)\n"},
		{fmt.Errorf("status: %w", Usagef("--redis: bad")), 2, "x: status: --redis: bad (x --help for usage)\n"},
		{errors.New("cannot reach Redis"), 1, "x: cannot reach Redis\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if code := ExitCode("x", tt.err, &b); code != tt.code || b.String() != tt.line {
			t.Errorf("ExitCode(%v) = %d, %q, want %d, %q", tt.err, code, b.String(), tt.code, tt.line)
		}
	}
}

// TestSleepEndsWithItsContext: a cancelled context ends a long sleep.
func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(cancelled, 1h) = %v, want context.Canceled", err)
	}
	if err := Sleep(context.Background(), 0); err != nil {
		t.Errorf("Sleep(0) = %v, want nil", err)
	}
}

// TestDialRedisBadAddress: an address that does not parse is bad input.
func TestDialRedisBadAddress(t *testing.T) {
	_, _, err := DialRedis(context.Background(), "redis://host:notaport")
	var b bytes.Buffer
	if code := ExitCode("x", err, &b); code != 2 {
		t.Errorf("ExitCode(DialRedis(bad)) = %d (%v), want 2", code, err)
	}
}
