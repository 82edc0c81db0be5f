package redissuite

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func TestLabIsValid(t *testing.T) {
	if err := Lab.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := Lab.TotalPoints(); got != 100 {
		t.Errorf("points add up to %d, want 100", got)
	}
}

// The real-server plumbing is tested against a miniredis listening on a
// loopback port, which is what a real server looks like to it.

func TestConnectRealFailsFastOnAnUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err = connectReal(addr, false)
	if err == nil {
		t.Fatalf("connectReal(%q) with nothing listening = nil error, want one", addr)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("connectReal(%q) took %v to fail, want a prompt failure", addr, took)
	}
	if msg := err.Error(); !strings.Contains(msg, "cannot reach a Redis server") || strings.Contains(msg, "\n") {
		t.Errorf("connectReal(%q) error = %q, want one line saying it cannot reach Redis", addr, msg)
	}
}

func TestConnectRealRefusesADatabaseWithForeignKeys(t *testing.T) {
	m := miniredis.RunT(t)
	m.Set("labkit:test:old:1", "x")
	if s, err := connectReal(m.Addr(), false); err != nil {
		t.Errorf("connectReal with only labkit: keys = %v, want nil", err)
	} else {
		s.close()
	}
	m.Set("session:42", "someone else's")
	_, err := connectReal(m.Addr(), false)
	if err == nil || !strings.Contains(err.Error(), `outside "labkit:"`) || !strings.Contains(err.Error(), AllowForeignEnv) {
		t.Errorf("connectReal with a foreign key = %v, want an error naming the key's namespace and %s", err, AllowForeignEnv)
	}
	s, err := connectReal(m.Addr(), true)
	if err != nil {
		t.Fatalf("connectReal with a foreign key, allowed = %v, want nil", err)
	}
	s.close()
	if !m.Exists("session:42") {
		t.Error("connectReal deleted a key it does not own")
	}
}

func TestConnectRealAcceptsAURL(t *testing.T) {
	m := miniredis.RunT(t)
	m.Select(3)
	m.Set("session:42", "x") // in database 3, not 5
	s, err := connectReal("redis://"+m.Addr()+"/5", false)
	if err != nil {
		t.Fatalf("connectReal(redis://.../5) = %v, want nil: database 5 is empty", err)
	}
	defer s.close()
	if s.base.DB != 5 {
		t.Errorf("database = %d, want 5", s.base.DB)
	}
}

func TestDeletePrefixDeletesOnlyItsOwnKeys(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	for _, k := range []string{"labkit:test:abc:1:a", "labkit:test:abc:1:b", "labkit:test:abc:10:a", "labkit:test:abd:1:a", "session:42"} {
		rdb.Set(ctx, k, "x", 0)
	}
	if err := deletePrefix(rdb, "labkit:test:abc:1:"); err != nil {
		t.Fatal(err)
	}
	got := m.Keys()
	want := []string{"labkit:test:abc:10:a", "labkit:test:abd:1:a", "session:42"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("keys after deletePrefix(labkit:test:abc:1:) = %v, want %v", got, want)
	}
	if err := deletePrefix(rdb, "session:"); err == nil {
		t.Error(`deletePrefix("session:") = nil, want a refusal: the suite deletes only labkit:test: keys`)
	}
	if !m.Exists("session:42") {
		t.Error("deletePrefix deleted a key outside labkit:test:")
	}
}
