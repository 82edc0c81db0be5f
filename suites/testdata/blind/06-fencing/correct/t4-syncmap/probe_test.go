package fencing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var (
	_ = errors.New
	_ = fmt.Sprint
	_ = fakeclock.Now
	_ = time.Second
)

var bg = context.Background()

// memKV is a KV in memory; getHook runs after a Get's read; putErr fails Puts; getErr fails Gets.
type memKV struct {
	mu      sync.Mutex
	m       map[string]FencedValue
	getHook func(key string)
	getErr  error
	putErr  error
}

func newKV() *memKV { return &memKV{m: map[string]FencedValue{}} }

func (k *memKV) Get(ctx context.Context, key string) (FencedValue, bool, error) {
	if err := ctx.Err(); err != nil {
		return FencedValue{}, false, err
	}
	k.mu.Lock()
	if k.getErr != nil {
		k.mu.Unlock()
		return FencedValue{}, false, k.getErr
	}
	v, ok := k.m[key]
	k.mu.Unlock()
	if h := k.getHook; h != nil {
		h(key)
	}
	return v, ok, nil
}

func (k *memKV) Put(ctx context.Context, key string, v FencedValue) error {
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

func (k *memKV) get(key string) FencedValue { k.mu.Lock(); defer k.mu.Unlock(); return k.m[key] }

func locks(t *testing.T, ttl time.Duration) *Locks {
	t.Helper()
	l, err := NewLocks(Options{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// R3: a grant ends at its Expires: from that instant on (not one nanosecond later) Acquire grants again.
func TestProbeRegrantAtExpiresExactly(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		l := locks(t, 10*time.Second)
		g, _ := l.Acquire(bg, "report", "A")
		fakeclock.Advance(10*time.Second - time.Nanosecond)
		if _, err := l.Acquire(bg, "report", "B"); !errors.Is(err, ErrLockHeld) {
			t.Fatalf("1 ns before Expires: %v", err)
		}
		fakeclock.Advance(time.Nanosecond)
		g2, err := l.Acquire(bg, "report", "B")
		if err != nil || g2.Token <= g.Token {
			t.Fatalf("at Expires exactly: %v, %v; want a new grant with a larger token", g2, err)
		}
	})
}

// R2: any string is a resource name, compared exactly: other resources are not affected.
func TestProbeResourceNamesExact(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		l := locks(t, 10*time.Second)
		for _, name := range []string{"report", "Report", " report", ""} {
			if _, err := l.Acquire(bg, name, "A"); err != nil {
				t.Fatalf("Acquire(%q) = %v; distinct names are distinct resources", name, err)
			}
		}
	})
}

// R11: a failed Read is an error, never "nothing written".
func TestProbeFailedReadIsAnError(t *testing.T) {
	kv := newKV()
	s := NewStore(kv)
	_ = s.Write(bg, 1, "r", "x")
	boom := errors.New("connection reset")
	kv.getErr = boom
	if _, ok, err := s.Read(bg, "r"); !errors.Is(err, boom) {
		t.Fatalf("Read with a failing KV = %v, %v; want the error wrapped", ok, err)
	}
}

// R5: grants are told apart by token, not by holder name: a restarted worker cannot release its successor's grant.
func TestProbeReleaseByOldGrantUnderSameName(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		l := locks(t, 10*time.Second)
		old, _ := l.Acquire(bg, "report", "worker-1")
		fakeclock.Advance(10 * time.Second)
		cur, err := l.Acquire(bg, "report", "worker-1") // the same name, after a restart
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(bg, old); !errors.Is(err, ErrLockLost) {
			t.Fatalf("Release of the expired grant = %v, want ErrLockLost", err)
		}
		if _, err := l.Acquire(bg, "report", "B"); !errors.Is(err, ErrLockHeld) {
			t.Fatalf("after the stale release, Acquire = %v; want ErrLockHeld (grant %v still holds)", err, cur)
		}
	})
}

// R5: releasing a grant that expired (even if nobody acquired the resource since) is ErrLockLost.
func TestProbeReleaseOfExpiredGrant(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		l := locks(t, 10*time.Second)
		g, _ := l.Acquire(bg, "report", "A")
		fakeclock.Advance(10 * time.Second)
		if err := l.Release(bg, g); !errors.Is(err, ErrLockLost) {
			t.Fatalf("Release at Expires = %v, want ErrLockLost", err)
		}
	})
}

// R11: a failed Put is an error and accepts nothing: a later write is judged against what the key holds.
func TestProbeFailedPutRaisesNoFence(t *testing.T) {
	kv := newKV()
	s := NewStore(kv)
	_ = s.Write(bg, 34, "r", "B")
	boom := errors.New("disk full")
	kv.putErr = boom
	if err := s.Write(bg, 40, "r", "C"); !errors.Is(err, boom) {
		t.Fatalf("Write with a failing Put = %v, want it wrapped", err)
	}
	kv.putErr = nil
	if err := s.Write(bg, 35, "r", "D"); err != nil {
		t.Fatalf("Write 35 after the failed 40 = %v; the key only ever accepted 34", err)
	}
}

// R6: a write whose token equals the highest accepted is accepted (the holder writing again).
func TestProbeEqualTokenAccepted(t *testing.T) {
	s := NewStore(newKV())
	if err := s.Write(bg, 34, "r", "draft"); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(bg, 34, "r", "final"); err != nil {
		t.Fatalf("second write with the same token = %v", err)
	}
	if v, _, _ := s.Read(bg, "r"); v.Value != "final" {
		t.Fatalf("Read = %v", v)
	}
}

// R11: a Write whose Get failed writes nothing, whatever its token (a zombie's included).
func TestProbeFailedGetWritesNothing(t *testing.T) {
	kv := newKV()
	s := NewStore(kv)
	_ = s.Write(bg, 34, "r", "B")
	boom := errors.New("timeout")
	kv.getErr = boom
	if err := s.Write(bg, 33, "r", "zombie"); !errors.Is(err, boom) {
		t.Fatalf("Write with a failing Get = %v, want it wrapped", err)
	}
	kv.getErr = nil
	if v := kv.get("r"); v.Token != 34 || v.Value != "B" {
		t.Fatalf("key holds %v after a write whose Get failed", v)
	}
}

// R8: the check and the write are one atomic step. (Real goroutines: a goroutine waiting on a
// mutex is invisible to synctest. The 100 ms bound is the time the token-34 write is given to
// land while the token-33 write sits between its read and its write; a correct store makes it wait.)
func TestProbeCheckAndWriteOneStep(t *testing.T) {
	kv := newKV()
	s := NewStore(kv)
	read33, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	kv.getHook = func(string) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(read33)
			<-release
		}
	}
	done33 := make(chan error, 1)
	go func() { done33 <- s.Write(bg, 33, "r", "A's report") }()
	<-read33
	done34 := make(chan error, 1)
	go func() { done34 <- s.Write(bg, 34, "r", "B's report") }()
	got34 := false
	select {
	case <-done34:
		got34 = true
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-done33
	if !got34 {
		<-done34
	}
	if v := kv.get("r"); v.Token != 34 || v.Value != "B's report" {
		t.Fatalf("key holds %v; want B's report with token 34", v)
	}
}

// R7: a write whose token is 0 is refused, on a key never written too.
func TestProbeZeroTokenRefusedOnNewKey(t *testing.T) {
	kv := newKV()
	s := NewStore(kv)
	if err := s.Write(bg, 0, "fresh", "x"); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("Write with token 0 on a new key = %v, want ErrStaleToken", err)
	}
	if _, ok, _ := s.Read(bg, "fresh"); ok {
		t.Fatal("token 0 was stored")
	}
}

// R4: every grant carries a larger token than every earlier grant, after a release and an expiry too.
func TestProbeTokensGrowAcrossRelease(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		l := locks(t, 10*time.Second)
		var last FencingToken
		for i := range 6 {
			g, err := l.Acquire(bg, "report", "A")
			if err != nil {
				t.Fatal(err)
			}
			if g.Token <= last {
				t.Fatalf("grant %d: token %d after %d", i, g.Token, last)
			}
			last = g.Token
			if i%2 == 0 {
				if err := l.Release(bg, g); err != nil {
					t.Fatal(err)
				}
			} else {
				fakeclock.Advance(10 * time.Second)
			}
		}
	})
}
