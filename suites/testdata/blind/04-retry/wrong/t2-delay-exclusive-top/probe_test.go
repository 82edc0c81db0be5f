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

func TestProbeDelayInclusive(t *testing.T) {
	p := Policy{Base: time.Second, Cap: time.Minute, Rand: rand.New(maxSrc{})}
	if got := p.Delay(0); got != time.Second {
		t.Fatalf("Delay(0) at max draw = %v, want 1s", got)
	}
	q := Policy{Base: 3, Cap: 3, Rand: rand.New(rand.NewPCG(3, 4))}
	seen := map[time.Duration]int{}
	for i := 0; i < 4000; i++ {
		seen[q.Delay(0)]++
	}
	if seen[3] < 700 {
		t.Fatalf("value 3 drawn %d/4000 times", seen[3])
	}
}
