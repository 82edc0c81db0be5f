package redis

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/fakeclock/fakeredis"
)

func TestProbeCorrectLifecycle(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		m, c := fakeredis.Start(t)
		ctx := context.Background()
		s := New(c, Options{Prefix: "p:", ClaimTTL: 2 * time.Second, Retention: 5 * time.Second})
		cl, _, err := s.Claim(ctx, "t", "k", "fp")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range m.Keys() {
			if m.TTL(k) != 2*time.Second {
				t.Fatalf("ttl %v", m.TTL(k))
			}
		}
		if _, _, err := s.Claim(ctx, "t", "k", "fp"); !errors.Is(err, ErrInProgress) {
			t.Fatal(err)
		}
		if _, _, err := s.Claim(ctx, "t", "k", "other"); !errors.Is(err, ErrFingerprintMismatch) {
			t.Fatal(err)
		}
		if _, _, err := s.Claim(ctx, "u", "k", "other"); err != nil {
			t.Fatal("tenant u blocked:", err)
		}
		if err := s.Complete(ctx, cl, "a|b:\x00\xff"); err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, cl, "x"); !errors.Is(err, ErrClaimLost) {
			t.Fatal(err)
		}
		s2 := New(fakeredis.NewClient(t, m), Options{Prefix: "p:"})
		_, r, err := s2.Claim(ctx, "t", "k", "fp")
		if err != nil || !r.Done || r.Result != "a|b:\x00\xff" {
			t.Fatal(r, err)
		}
		time.Sleep(5*time.Second + time.Millisecond)
		if _, r, err := s2.Claim(ctx, "t", "k", "fp"); err != nil || r.Done {
			t.Fatal(r, err)
		}
	})
}

func TestProbeCorrectConcurrentProcesses(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		m, _ := fakeredis.Start(t)
		var runs atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 5; i++ {
			s := New(fakeredis.NewClient(t, m), Options{Prefix: "p:"})
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Do(context.Background(), "t", "k", "fp", func(context.Context) (string, error) {
					runs.Add(1)
					time.Sleep(time.Second)
					return "v", nil
				})
				if err != nil && !errors.Is(err, ErrInProgress) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if runs.Load() != 1 {
			t.Fatal(runs.Load())
		}
	})
}

func TestProbeCorrectInvalid(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		_, c := fakeredis.Start(t)
		s := New(c, Options{Prefix: "p:"})
		for _, tk := range [][2]string{{"", "k"}, {"t", ""}, {"\x00t", "k"}, {"t", "k\x00"}, {string(make([]byte, 129)), "k"}} {
			if _, _, err := s.Claim(context.Background(), tk[0], tk[1], "fp"); !errors.Is(err, ErrInvalidKey) {
				t.Fatal(tk, err)
			}
		}
		ok := []byte{}
		for i := 0; i < 128; i++ {
			ok = append(ok, 'a')
		}
		if _, _, err := s.Claim(context.Background(), string(ok), "k", "fp"); err != nil {
			t.Fatal(err)
		}
	})
}
