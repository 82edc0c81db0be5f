package fencing

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = fakeclock.Now
var _ = time.Second
var _ sync.Mutex

// probeKV is an in-memory KV whose calls can fail or pause.
type probeKV struct {
	mu      sync.Mutex
	m       map[string]FencedValue
	getErr  error
	putErr  error
	getHook func(key string) // runs after Get read the key, before it returns
}

func newProbeKV() *probeKV { return &probeKV{m: map[string]FencedValue{}} }

func (k *probeKV) Get(ctx context.Context, key string) (FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return FencedValue{}, false, err
	}
	k.mu.Lock()
	v, ok := k.m[key]
	err, hook := k.getErr, k.getHook
	k.mu.Unlock()
	if err != nil {
		return FencedValue{}, false, err
	}
	if hook != nil {
		hook(key)
	}
	return v, ok, nil
}

func (k *probeKV) Put(ctx context.Context, key string, v FencedValue) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.putErr != nil {
		return k.putErr
	}
	k.m[key] = v
	return nil
}

func (k *probeKV) set(f func(k *probeKV)) { k.mu.Lock(); f(k); k.mu.Unlock() }

func mustLocks(t *testing.T, ttl time.Duration) *Locks {
	t.Helper()
	l, err := NewLocks(Options{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestProbeReleaseBySameNameSuccessor(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		l := mustLocks(t, 10*time.Second)
		g1, err := l.Acquire(ctx, "report", "A")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		g2, err := l.Acquire(ctx, "report", "A")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx, g1); !errors.Is(err, ErrLockLost) {
			t.Fatalf("release of superseded grant %v: got %v, want ErrLockLost", g1, err)
		}
		if _, err := l.Acquire(ctx, "report", "B"); !errors.Is(err, ErrLockHeld) {
			t.Fatalf("after a refused release, %v must still hold; acquire got %v", g2, err)
		}
	})
}

func TestProbeReleaseOfExpiredGrant(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		l := mustLocks(t, 10*time.Second)
		g, err := l.Acquire(ctx, "report", "A")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		if err := l.Release(ctx, g); !errors.Is(err, ErrLockLost) {
			t.Fatalf("release of expired grant: got %v, want ErrLockLost", err)
		}
	})
}

func TestProbeExpiryExactInstant(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		l := mustLocks(t, 10*time.Second)
		g, err := l.Acquire(ctx, "report", "A")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(g.Expires))
		if _, err := l.Acquire(ctx, "report", "B"); err != nil {
			t.Fatalf("acquire at Expires exactly: %v", err)
		}
	})
}

func TestProbeTokenIncreasesAfterRelease(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		l := mustLocks(t, 10*time.Second)
		g1, err := l.Acquire(ctx, "report", "A")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx, g1); err != nil {
			t.Fatal(err)
		}
		g2, err := l.Acquire(ctx, "report", "B")
		if err != nil {
			t.Fatal(err)
		}
		if g2.Token <= g1.Token {
			t.Fatalf("token after release %d, not larger than %d", g2.Token, g1.Token)
		}
	})
}

func TestProbeCancelledReleaseChangesNothing(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		l := mustLocks(t, 10*time.Second)
		g, err := l.Acquire(context.Background(), "report", "A")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := l.Release(ctx, g); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled release: got %v, want context.Canceled", err)
		}
		if _, err := l.Acquire(context.Background(), "report", "B"); !errors.Is(err, ErrLockHeld) {
			t.Fatalf("after cancelled release the grant must hold; acquire got %v", err)
		}
	})
}

func TestProbeFirstTokenNotZero(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		l := mustLocks(t, 0)
		g, err := l.Acquire(ctx, "report", "A")
		if err != nil {
			t.Fatal(err)
		}
		if g.Token == 0 {
			t.Fatalf("first grant has token 0")
		}
		if err := NewStore(newProbeKV()).Write(ctx, g.Token, "report", "A's"); err != nil {
			t.Fatalf("write with first grant's token: %v", err)
		}
	})
}

func TestProbeConcurrentAcquireOneHolder(t *testing.T) {
	for round := 0; round < 20; round++ {
		l := mustLocks(t, time.Hour)
		var wg sync.WaitGroup
		var mu sync.Mutex
		granted := 0
		start := make(chan struct{})
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, err := l.Acquire(context.Background(), "report", "w"); err == nil {
					mu.Lock()
					granted++
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		if granted != 1 {
			t.Fatalf("round %d: %d grants of one resource", round, granted)
		}
	}
}

func TestProbeCheckAndWriteOneStep(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		kv := newProbeKV()
		s := NewStore(kv)
		paused := make(chan struct{})
		resume := make(chan struct{})
		first := true
		kv.set(func(k *probeKV) {
			k.getHook = func(string) {
				k.mu.Lock()
				f := first
				first = false
				k.mu.Unlock()
				if f {
					close(paused)
					<-resume
				}
			}
		})
		errA := make(chan error, 1)
		go func() { errA <- s.Write(ctx, 33, "report", "A's") }()
		<-paused
		errB := make(chan error, 1)
		go func() { errB <- s.Write(ctx, 34, "report", "B's") }()
		fakeclock.Wait()
		close(resume)
		ea, eb := <-errA, <-errB
		if eb != nil {
			t.Fatalf("write 34: %v", eb)
		}
		v, _, _ := s.Read(ctx, "report")
		if v.Token != 34 || v.Value != "B's" {
			t.Fatalf("key holds %v after overlapping 33 (err %v) and 34", v, ea)
		}
	})
}

func TestProbeFailedPutRaisesNoFence(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		kv := newProbeKV()
		s := NewStore(kv)
		if err := s.Write(ctx, 10, "report", "v10"); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("kv put down")
		kv.set(func(k *probeKV) { k.putErr = boom })
		if err := s.Write(ctx, 20, "report", "v20"); !errors.Is(err, boom) {
			t.Fatalf("failing put: got %v, want the KV error", err)
		}
		kv.set(func(k *probeKV) { k.putErr = nil })
		if err := s.Write(ctx, 15, "report", "v15"); err != nil {
			t.Fatalf("write 15 over stored 10 after a failed 20: %v", err)
		}
		v, _, _ := s.Read(ctx, "report")
		if v.Token != 15 {
			t.Fatalf("key holds %v", v)
		}
	})
}

func TestProbeFailedGetWritesNothing(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		kv := newProbeKV()
		s := NewStore(kv)
		if err := s.Write(ctx, 34, "report", "B's"); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("kv get down")
		kv.set(func(k *probeKV) { k.getErr = boom })
		if err := s.Write(ctx, 33, "report", "A's"); !errors.Is(err, boom) {
			t.Fatalf("write with failing get: got %v, want the KV error", err)
		}
		kv.set(func(k *probeKV) { k.getErr = nil })
		v, _, _ := s.Read(ctx, "report")
		if v.Token != 34 || v.Value != "B's" {
			t.Fatalf("key holds %v", v)
		}
	})
}

func TestProbeZeroTokenOnNewKey(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		s := NewStore(newProbeKV())
		if err := s.Write(ctx, 0, "fresh", "x"); !errors.Is(err, ErrStaleToken) {
			t.Fatalf("token 0 on new key: got %v", err)
		}
		if _, ok, err := s.Read(ctx, "fresh"); ok || err != nil {
			t.Fatalf("read after refused write: ok=%v err=%v", ok, err)
		}
	})
}

func TestProbeFailedReadIsError(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		kv := newProbeKV()
		s := NewStore(kv)
		boom := errors.New("kv get down")
		kv.set(func(k *probeKV) { k.getErr = boom })
		if _, _, err := s.Read(ctx, "report"); !errors.Is(err, boom) {
			t.Fatalf("read with failing get: got %v, want the KV error", err)
		}
	})
}

func TestProbeCancelledAcquireGrantsNothing(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		l := mustLocks(t, 10*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := l.Acquire(ctx, "report", "A"); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled acquire: %v", err)
		}
		if _, err := l.Acquire(context.Background(), "report", "B"); err != nil {
			t.Fatalf("after a cancelled acquire the resource must be free: %v", err)
		}
	})
}

func TestProbeCorrectZombieScenario(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		ctx := context.Background()
		l := mustLocks(t, 10*time.Second)
		s := NewStore(newProbeKV())
		a, err := l.Acquire(ctx, "report.txt", "A")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(12 * time.Second)
		b, err := l.Acquire(ctx, "report.txt", "B")
		if err != nil || b.Token <= a.Token {
			t.Fatalf("B: %v %v", b, err)
		}
		if err := s.Write(ctx, b.Token, "report.txt", "B's"); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, b.Token, "report.txt", "B's final"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(19 * time.Second)
		if err := s.Write(ctx, a.Token, "report.txt", "A's"); !errors.Is(err, ErrStaleToken) {
			t.Fatalf("zombie: %v", err)
		}
		if err := s.Write(ctx, ^FencingToken(0), "", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := NewLocks(Options{TTL: -1}); !errors.Is(err, ErrInvalidTTL) {
			t.Fatal(err)
		}
	})
}
