package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

func setup(t *testing.T, o Options) (*miniredis.Miniredis, func() *Store) {
	m := miniredis.RunT(t)
	return m, func() *Store {
		c := goredis.NewClient(&goredis.Options{Addr: m.Addr()})
		t.Cleanup(func() { c.Close() })
		return New(c, o)
	}
}

func TestProbeLifecycle(t *testing.T) {
	ctx := context.Background()
	m, mk := setup(t, Options{Prefix: "p:", ClaimTTL: 1500 * time.Millisecond, Retention: 10 * time.Second})
	a, b := mk(), mk()
	c, _, err := a.Claim(ctx, "t", "k", "fp")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range m.Keys() {
		if !strings.HasPrefix(k, "p:") || m.TTL(k) <= 0 {
			t.Fatalf("key %q ttl %v", k, m.TTL(k))
		}
	}
	if _, _, err := b.Claim(ctx, "t", "k", "fp"); !errors.Is(err, ErrInProgress) {
		t.Fatal(err)
	}
	if _, _, err := b.Claim(ctx, "t", "k", "other"); !errors.Is(err, ErrFingerprintMismatch) {
		t.Fatal(err)
	}
	m.FastForward(1499 * time.Millisecond)
	if _, _, err := b.Claim(ctx, "t", "k", "fp"); !errors.Is(err, ErrInProgress) {
		t.Fatal(err)
	}
	m.FastForward(time.Millisecond)
	c2, _, err := b.Claim(ctx, "t", "k", "fp")
	if err != nil || c2.Token == c.Token {
		t.Fatal(err)
	}
	if err := a.Release(ctx, c); !errors.Is(err, ErrClaimLost) {
		t.Fatal(err)
	}
	if err := a.Complete(ctx, c, "x"); !errors.Is(err, ErrClaimLost) {
		t.Fatal(err)
	}
	res := "a\x00b|:\n\"é" + strings.Repeat("z", 65536)
	if err := b.Complete(ctx, c2, res); err != nil {
		t.Fatal(err)
	}
	if err := b.Complete(ctx, c2, res); !errors.Is(err, ErrClaimLost) {
		t.Fatal(err)
	}
	m.FastForward(6 * time.Second)
	if _, r, err := a.Claim(ctx, "t", "k", "fp"); err != nil || !r.Done || r.Result != res {
		t.Fatal("replay", err)
	}
	m.FastForward(4 * time.Second)
	ran := false
	v, err := a.Do(ctx, "t", "k", "fp", func(context.Context) (string, error) { ran = true; return "v2", nil })
	if err != nil || !ran || v != "v2" {
		t.Fatal(v, err)
	}
	// keys unambiguous
	pairs := [][2]string{{"ab", "c"}, {"a", "bc"}, {"t:x", "k"}, {"t", "x:k"}, {"a\\", "b:c"}, {"a:b\\", "c"}, {"1:a", "b"}, {"1", "a:b"}}
	for i, p := range pairs {
		if _, err := a.Do(ctx, p[0], p[1], "fp", func(context.Context) (string, error) { return string(rune('A' + i)), nil }); err != nil {
			t.Fatalf("%v: %v", p, err)
		}
	}
	for i, p := range pairs {
		if _, r, _ := a.Claim(ctx, p[0], p[1], "fp"); r.Result != string(rune('A'+i)) {
			t.Fatalf("%v collided: %q", p, r.Result)
		}
	}
	if _, _, err := a.Claim(ctx, strings.Repeat("é", 64), strings.Repeat("😀", 64), "fp"); err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{"", "k"}, {"t", ""}, {"\x00", "k"}, {"t", "k\x00"}, {strings.Repeat("é", 64) + "x", "k"}, {"t", strings.Repeat("x", 257)}} {
		if _, _, err := a.Claim(ctx, p[0], p[1], "fp"); !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("%q: %v", p, err)
		}
	}
}
