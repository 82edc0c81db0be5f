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

func TestProbeAttemptCtxCallDeadline(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := Policy{MaxAttempts: 3, Base: time.Millisecond, Cap: time.Millisecond, Timeout: 10 * time.Second, Rand: rand.New(maxSrc{})}
		var dls []time.Time
		var endedAt time.Duration
		err := p.Do(context.Background(), func(ctx context.Context) error {
			d, _ := ctx.Deadline()
			dls = append(dls, d)
			if len(dls) == 1 {
				time.Sleep(4 * time.Second)
				return statusErr{code: 503}
			}
			<-ctx.Done()
			endedAt = fakeclock.Elapsed()
			return ctx.Err()
		})
		want := fakeclock.Epoch.Add(10 * time.Second)
		if len(dls) != 2 || !dls[1].Equal(want) || endedAt != 10*time.Second || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("deadlines %v, second attempt cut at %v, err %v", dls, endedAt, err)
		}
	})
}
