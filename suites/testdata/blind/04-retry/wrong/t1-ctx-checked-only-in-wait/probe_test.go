package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
)

var _ = errors.New
var _ = fmt.Sprint
var _ = math.MaxInt
var _ sync.Mutex
var _ = fakeclock.Run
var _ = rand.New

// maxSource always yields the largest value: Delay(n) is then Ceiling(n).
type maxSource struct{ draws *int }

func (s maxSource) Uint64() uint64 {
	if s.draws != nil {
		*s.draws++
	}
	return math.MaxUint64
}

var errFlaky = errors.New("probe: connection reset")

type statusErr int

func (e statusErr) Error() string   { return fmt.Sprintf("status %d", int(e)) }
func (e statusErr) StatusCode() int { return int(e) }

type hintErr time.Duration

func (e hintErr) Error() string             { return "throttled" }
func (e hintErr) RetryAfter() time.Duration { return time.Duration(e) }
func (e hintErr) StatusCode() int           { return 429 }

// attemptTimes runs Do with op failing with err every time and returns the
// instants of the attempts and Do's error.
func attemptTimes(p Policy, ctx context.Context, err error) ([]time.Duration, error) {
	start := time.Now()
	var at []time.Duration
	e := p.Do(ctx, func(context.Context) error {
		at = append(at, time.Since(start))
		return err
	})
	return at, e
}

func TestProbeCancelAfterAttemptStopsClean(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		draws := 0
		b := NewBudget(3)
		p := Policy{MaxAttempts: 5, Base: time.Second, Cap: time.Minute, Rand: rand.New(maxSource{&draws}), Budget: b}
		ctx, cancel := context.WithCancel(context.Background())
		err := p.Do(ctx, func(context.Context) error { cancel(); return errFlaky })
		if !errors.Is(err, context.Canceled) || !errors.Is(err, errFlaky) || draws != 0 || b.Tokens() != 3 {
			t.Errorf("err %v, draws %d, tokens %d; want Canceled+attempt error, 0 draws, 3 tokens", err, draws, b.Tokens())
		}
	})
}
