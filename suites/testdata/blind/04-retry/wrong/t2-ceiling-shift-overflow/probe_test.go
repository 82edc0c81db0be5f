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

func TestProbeCeilingNoOverflow(t *testing.T) {
	p := Policy{Base: time.Second, Cap: time.Hour}
	for n := 12; n < 70; n++ {
		if got := p.Ceiling(n); got != time.Hour {
			t.Fatalf("Ceiling(%d) = %v, want 1h", n, got)
		}
	}
}
