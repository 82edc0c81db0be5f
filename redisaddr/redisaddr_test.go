package redisaddr

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
)

func TestOptionsAcceptsHostPortAndURLs(t *testing.T) {
	tests := []struct {
		in, addr string
		db       int
	}{
		{"127.0.0.1:6390", "127.0.0.1:6390", 0},
		{" localhost:6379 ", "localhost:6379", 0},
		{"redis://127.0.0.1:6390/15", "127.0.0.1:6390", 15},
		{"redis://user:pw@host:1234/2", "host:1234", 2},
	}
	for _, tt := range tests {
		o, err := Options(tt.in)
		if err != nil {
			t.Errorf("Options(%q) error = %v, want nil", tt.in, err)
			continue
		}
		if o.Addr != tt.addr || o.DB != tt.db || o.MaxRetries != -1 {
			t.Errorf("Options(%q) = addr %q db %d retries %d, want %q, %d, -1", tt.in, o.Addr, o.DB, o.MaxRetries, tt.addr, tt.db)
		}
	}
	for _, bad := range []string{"", "localhost", "redis://host:1/notanumber", "http://x:1"} {
		if _, err := Options(bad); !errors.Is(err, ErrBadAddr) {
			t.Errorf("Options(%q) error = %v, want ErrBadAddr", bad, err)
		}
	}
}

func TestCheck(t *testing.T) {
	m := miniredis.RunT(t)
	ctx := context.Background()
	if err := Check(ctx, m.Addr(), false); err != nil {
		t.Fatalf("Check(empty server) = %v, want nil", err)
	}
	m.Set("labkit:test:x", "1")
	if err := Check(ctx, m.Addr(), false); err != nil {
		t.Errorf("Check(server with only labkit: keys) = %v, want nil", err)
	}
	m.Set("customer:42", "1")
	err := Check(ctx, m.Addr(), false)
	if !errors.Is(err, ErrForeignKeys) || !strings.Contains(err.Error(), "customer:42") || !strings.Contains(err.Error(), AllowForeignEnv) {
		t.Errorf("Check(server with a foreign key) = %v, want ErrForeignKeys naming the key and %s", err, AllowForeignEnv)
	}
	if err := Check(ctx, m.Addr(), true); err != nil {
		t.Errorf("Check(foreign keys allowed) = %v, want nil", err)
	}
	if err := Check(ctx, "redis://"+m.Addr()+"/3", false); err != nil {
		t.Errorf("Check(empty database 3 as a URL) = %v, want nil", err)
	}
	addr := m.Addr()
	m.Close()
	if err := Check(ctx, addr, false); !errors.Is(err, ErrUnreachable) {
		t.Errorf("Check(stopped server) = %v, want ErrUnreachable", err)
	}
}

func TestAllowForeign(t *testing.T) {
	if AllowForeign([]string{"A=1"}) || !AllowForeign([]string{"A=1", AllowForeignEnv + "=1"}) {
		t.Error("AllowForeign does not read " + AllowForeignEnv + "=1")
	}
}

// TestDescribe: a report names the server and its database, never the
// credentials in a URL.
func TestDescribe(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:6390":                       "127.0.0.1:6390 db 0",
		"redis://ann:s3cret@db.example:6379/3": "db.example:6379 db 3",
		"rediss://db.example:6380/1":           "db.example:6380 db 1 (TLS)",
	} {
		got := Describe(addr)
		if got != want || strings.Contains(got, "s3cret") {
			t.Errorf("Describe(%q) = %q, want %q", addr, got, want)
		}
	}
}
