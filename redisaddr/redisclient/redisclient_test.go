package redisclient

import (
	"context"
	"errors"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/fourth-outcome/labkit/redisaddr"
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
		if _, err := Options(bad); !errors.Is(err, redisaddr.ErrBadAddr) {
			t.Errorf("Options(%q) error = %v, want redisaddr.ErrBadAddr", bad, err)
		}
	}
}

// TestOptionsTLS: a rediss:// address gets a TLS configuration naming its
// host; a plain one none.
func TestOptionsTLS(t *testing.T) {
	o, err := Options("rediss://db.example:6380/1")
	if err != nil || o.TLSConfig == nil || o.TLSConfig.ServerName != "db.example" {
		t.Errorf("Options(rediss://db.example:6380/1) = %+v, %v, want a TLS configuration for db.example", o, err)
	}
	if o, _ := Options("redis://db.example:6380/1"); o.TLSConfig != nil {
		t.Errorf("Options(redis://...).TLSConfig = %v, want nil", o.TLSConfig)
	}
}

// TestCheck: the same check as redisaddr.Check on a plain server; on a
// rediss:// address it dials TLS (a plain server refuses the handshake).
func TestCheck(t *testing.T) {
	m := miniredis.RunT(t)
	ctx := context.Background()
	if err := Check(ctx, m.Addr(), false); err != nil {
		t.Errorf("Check(empty server) = %v, want nil", err)
	}
	m.Set("other", "1")
	if err := Check(ctx, m.Addr(), false); !errors.Is(err, redisaddr.ErrForeignKeys) {
		t.Errorf("Check(foreign key) = %v, want ErrForeignKeys", err)
	}
	if err := Check(ctx, "rediss://"+m.Addr()+"/0", true); !errors.Is(err, redisaddr.ErrUnreachable) {
		t.Errorf("Check(rediss:// to a plain server) = %v, want ErrUnreachable (the TLS handshake fails)", err)
	}
}
