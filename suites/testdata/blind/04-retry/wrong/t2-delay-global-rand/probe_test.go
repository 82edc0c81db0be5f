package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.Is
var _ = fakeclock.Now
var _ = context.Background
var _ = math.MaxInt64
var _ = rand.New

type maxSrc struct{}

func (maxSrc) Uint64() uint64 { return math.MaxUint64 }

type statusErr struct {
	code int
	ra   time.Duration
}

func (e statusErr) Error() string             { return fmt.Sprintf("status %d", e.code) }
func (e statusErr) StatusCode() int           { return e.code }
func (e statusErr) RetryAfter() time.Duration { return e.ra }

func TestProbeDelayFromPolicyRand(t *testing.T) {
	a := Policy{Base: time.Second, Cap: time.Hour, Rand: rand.New(rand.NewPCG(9, 9))}
	b := Policy{Base: time.Second, Cap: time.Hour, Rand: rand.New(rand.NewPCG(9, 9))}
	for n := 0; n < 8; n++ {
		if x, y := a.Delay(n), b.Delay(n); x != y {
			t.Fatalf("same seed, Delay(%d) = %v and %v", n, x, y)
		}
	}
	m := Policy{Base: time.Second, Cap: time.Hour, Rand: rand.New(maxSrc{})}
	if m.Delay(3) != 8*time.Second {
		t.Fatalf("Delay ignores Policy.Rand: %v", m.Delay(3))
	}
}
