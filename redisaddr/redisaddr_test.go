package redisaddr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
)

func TestParseAcceptsHostPortAndURLs(t *testing.T) {
	tests := []struct {
		in   string
		want Addr
	}{
		{"127.0.0.1:6390", Addr{Network: "tcp", Host: "127.0.0.1:6390"}},
		{" localhost:6379 ", Addr{Network: "tcp", Host: "localhost:6379"}},
		{"[::1]:6379", Addr{Network: "tcp", Host: "[::1]:6379"}},
		{"redis://127.0.0.1:6390/15", Addr{Network: "tcp", Host: "127.0.0.1:6390", DB: 15}},
		{"redis://user:pw@host:1234/2", Addr{Network: "tcp", Host: "host:1234", Username: "user", Password: "pw", DB: 2}},
		{"redis://:pw@host", Addr{Network: "tcp", Host: "host:6379", Password: "pw"}},
		{"rediss://db.example:6380/1", Addr{Network: "tcp", Host: "db.example:6380", DB: 1, TLS: true}},
		{"unix:///tmp/redis.sock?db=3", Addr{Network: "unix", Host: "/tmp/redis.sock", DB: 3}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q) error = %v, want nil", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
	for _, bad := range []string{"", "localhost", "localhost:", "redis://host:1/notanumber", "redis://host/-1", "http://x:1", "unix://", "unix:///s?db=x"} {
		if _, err := Parse(bad); !errors.Is(err, ErrBadAddr) {
			t.Errorf("Parse(%q) error = %v, want ErrBadAddr", bad, err)
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

// TestCheckLogsIn: a URL's credentials and database are used, and a wrong
// password is a one-line ErrUnreachable.
func TestCheckLogsIn(t *testing.T) {
	m := miniredis.RunT(t)
	m.RequireUserAuth("ann", "s3cret")
	ctx := context.Background()
	if err := Check(ctx, "redis://ann:s3cret@"+m.Addr()+"/2", false); err != nil {
		t.Errorf("Check(right credentials) = %v, want nil", err)
	}
	m.Select(2)
	m.Set("customer:1", "x")
	if err := Check(ctx, "redis://ann:s3cret@"+m.Addr()+"/2", false); !errors.Is(err, ErrForeignKeys) {
		t.Errorf("Check(database 2 with a foreign key) = %v, want ErrForeignKeys", err)
	}
	if err := Check(ctx, "redis://ann:s3cret@"+m.Addr()+"/1", false); err != nil {
		t.Errorf("Check(empty database 1) = %v, want nil", err)
	}
	err := Check(ctx, "redis://ann:wrong@"+m.Addr()+"/1", false)
	if !errors.Is(err, ErrUnreachable) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Check(wrong password) = %v, want a one-line ErrUnreachable", err)
	}
}

// TestCheckManyKeys: the scan goes past its first page to find a foreign
// key among many of the kit's own.
func TestCheckManyKeys(t *testing.T) {
	m := miniredis.RunT(t)
	for i := range 2500 {
		m.Set(fmt.Sprintf("labkit:k%d", i), "1")
	}
	if err := Check(context.Background(), m.Addr(), false); err != nil {
		t.Fatalf("Check(2500 labkit: keys) = %v, want nil", err)
	}
	m.Set("zzz", "1")
	if err := Check(context.Background(), m.Addr(), false); !errors.Is(err, ErrForeignKeys) {
		t.Errorf("Check(2500 labkit: keys and zzz) = %v, want ErrForeignKeys", err)
	}
}

// TestCheckNeedsTLS: without a dialer that speaks TLS, a rediss:// address
// is only dialled: nothing listening is ErrUnreachable (labctl's exit 2), a
// listener is ErrNeedsTLS (left for the suite's client to check).
func TestCheckNeedsTLS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := "rediss://" + ln.Addr().String() + "/0"
	if err := Check(context.Background(), addr, false); !errors.Is(err, ErrNeedsTLS) {
		t.Errorf("Check(%s) = %v, want ErrNeedsTLS", addr, err)
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = "rediss://" + closed.Addr().String() + "/0"
	closed.Close()
	if err := Check(context.Background(), addr, false); !errors.Is(err, ErrUnreachable) {
		t.Errorf("Check(%s) = %v, want ErrUnreachable", addr, err)
	}
}

// TestCheckNotRedis: a server that answers with something that is not
// Redis, or not at all, is ErrUnreachable within the timeouts.
func TestCheckNotRedis(t *testing.T) {
	for name, answer := range map[string]string{
		"http":    "HTTP/1.1 400 Bad Request\r\n\r\n",
		"garbage": "$99999999999\r\n",
		"silent":  "",
	} {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				if answer != "" {
					c.Write([]byte(answer))
				}
				io.Copy(io.Discard, c)
			}()
			err = Check(context.Background(), ln.Addr().String(), false)
			if !errors.Is(err, ErrUnreachable) {
				t.Errorf("Check(a %s server) = %v, want ErrUnreachable", name, err)
			}
		})
	}
}
