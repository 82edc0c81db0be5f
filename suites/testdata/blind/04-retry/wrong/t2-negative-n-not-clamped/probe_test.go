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

func TestProbeNegativeN(t *testing.T) {
	p := Policy{Base: time.Second, Cap: time.Hour}
	for _, n := range []int{-1, -64, math.MinInt} {
		if got := p.Ceiling(n); got != time.Second {
			t.Fatalf("Ceiling(%d) = %v, want 1s", n, got)
		}
	}
}
