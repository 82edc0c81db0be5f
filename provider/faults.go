package provider

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Op names one of the provider's operations, for fault filters and the log.
type Op string

// The operations. A Fault or Chaos whose Op is empty applies to all of them.
const (
	OpSend   Op = "Send"
	OpStatus Op = "Status"
	OpFind   Op = "Find"
)

// verb is the lower-case prefix of error messages: `send "k1": ...`.
func (o Op) verb() string { return strings.ToLower(string(o)) }

// FaultKind is what an injected fault does to the call it hits.
type FaultKind int

// The fault menu. Every kind may also carry a Latency (see Fault).
const (
	// FaultNone lets the call through untouched. A scripted Pass() consumes
	// one matching call, which positions the faults queued after it.
	FaultNone FaultKind = iota

	// FaultFailBeforeCommit fails the call with ErrUnavailable before the
	// provider looks at the key: nothing is committed, nothing delivered.
	FaultFailBeforeCommit

	// FaultLoseResponse lets the provider process the call normally (a new
	// Send commits and delivers; a duplicate replays) and then loses the
	// answer: the caller blocks until its context is done, or for
	// Options.ResponseTimeout when its context has no deadline, and gets an
	// error wrapping ErrTimeout. It cannot tell this from a request that
	// never arrived.
	FaultLoseResponse

	// FaultSlow delays the call by Fault.Latency and then processes it
	// normally. During the delay a new Send's key is in flight (a duplicate
	// gets ErrInProgress); if the caller's context ends first, the provider
	// abandons the request before committing it and the caller gets an error
	// wrapping ErrTimeout.
	FaultSlow

	// FaultThrottle refuses the call with a *ThrottledError whose RetryAfter
	// is Fault.RetryAfter; nothing is committed.
	FaultThrottle
)

// String returns the kind's name as it appears in the log: "none",
// "fail-before-commit", "lose-response", "slow", "throttle".
func (k FaultKind) String() string {
	switch k {
	case FaultNone:
		return "none"
	case FaultFailBeforeCommit:
		return "fail-before-commit"
	case FaultLoseResponse:
		return "lose-response"
	case FaultSlow:
		return "slow"
	case FaultThrottle:
		return "throttle"
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// Fault is one injected misbehaviour, queued with Provider.Script. The
// constructors (Pass, FailBeforeCommit, LoseResponse, Slow, Throttle) and the
// filter methods (On, ForAccount, ForKey, WithLatency) build one readably:
//
//	p.Script(
//		provider.LoseResponse().On(provider.OpSend).ForKey("op-1"),
//		provider.Throttle(2*time.Second),
//	)
type Fault struct {
	Kind FaultKind

	// Op, Account and Key filter the calls the fault applies to; an empty
	// field matches every call. Key matches a Find's reference.
	Op      Op
	Account string
	Key     string

	// Latency delays the call's answer by this much (on the time package's
	// clock) before the fault takes effect. For a new Send that is not
	// refused, the commit happens at the end of the delay.
	Latency time.Duration

	// RetryAfter is the hint of a FaultThrottle; zero means one second.
	RetryAfter time.Duration
}

// Pass returns a fault that lets one matching call through untouched.
func Pass() Fault { return Fault{Kind: FaultNone} }

// FailBeforeCommit returns a fault that fails one call with ErrUnavailable
// before anything is committed.
func FailBeforeCommit() Fault { return Fault{Kind: FaultFailBeforeCommit} }

// LoseResponse returns a fault that lets one call be processed (committed,
// for a new Send) and then withholds its answer until the caller's deadline.
func LoseResponse() Fault { return Fault{Kind: FaultLoseResponse} }

// Slow returns a fault that delays one call by d before processing it.
func Slow(d time.Duration) Fault { return Fault{Kind: FaultSlow, Latency: d} }

// Throttle returns a fault that refuses one call with a *ThrottledError
// carrying retryAfter (zero means one second).
func Throttle(retryAfter time.Duration) Fault {
	return Fault{Kind: FaultThrottle, RetryAfter: retryAfter}
}

// On returns f restricted to calls of op.
func (f Fault) On(op Op) Fault { f.Op = op; return f }

// ForAccount returns f restricted to calls from account.
func (f Fault) ForAccount(account string) Fault { f.Account = account; return f }

// ForKey returns f restricted to calls with the idempotency key key (or, for
// Find, the reference key).
func (f Fault) ForKey(key string) Fault { f.Key = key; return f }

// WithLatency returns f with its Latency set to d.
func (f Fault) WithLatency(d time.Duration) Fault { f.Latency = d; return f }

// matches reports whether f applies to a call of op by account with key.
func (f Fault) matches(op Op, account, key string) bool {
	return (f.Op == "" || f.Op == op) &&
		(f.Account == "" || f.Account == account) &&
		(f.Key == "" || f.Key == key)
}

// String describes the fault for the log: "lose-response", "slow 2s",
// "throttle retry-after 1s".
func (f Fault) String() string {
	s := f.Kind.String()
	if f.Kind == FaultThrottle {
		s += fmt.Sprintf(" retry-after %v", f.retryAfter())
	}
	if f.Latency > 0 {
		if f.Kind == FaultSlow {
			s += fmt.Sprintf(" %v", f.Latency)
		} else {
			s += fmt.Sprintf(" after %v", f.Latency)
		}
	}
	return s
}

func (f Fault) retryAfter() time.Duration {
	if f.RetryAfter > 0 {
		return f.RetryAfter
	}
	return time.Second
}

// Chaos draws a fault for every call that no scripted fault claims, from a
// random source seeded with Seed. The probabilities are per call; their sum
// must not exceed 1, and what remains is the probability of no fault. With
// the same seed and the same sequence of calls, the same faults happen, so a
// failing chaos run replays from its seed.
type Chaos struct {
	// Seed seeds the random source (math/rand/v2 PCG). Print it when a
	// test fails.
	Seed int64

	FailBeforeCommit float64 // probability of FaultFailBeforeCommit
	LoseResponse     float64 // probability of FaultLoseResponse
	Throttle         float64 // probability of FaultThrottle
	Slow             float64 // probability of FaultSlow

	// Latency bounds a chaos FaultSlow's delay, drawn uniformly from
	// (0, Latency]; zero means one second.
	Latency time.Duration

	// RetryAfter is the hint of a chaos FaultThrottle; zero means one
	// second.
	RetryAfter time.Duration

	// Op restricts chaos to one operation; empty means every call.
	Op Op
}

// String describes the configuration, seed first, for test logs.
func (c Chaos) String() string {
	op := "all calls"
	if c.Op != "" {
		op = string(c.Op)
	}
	return fmt.Sprintf("chaos seed=%d on %s: fail-before-commit=%g lose-response=%g throttle=%g slow=%g",
		c.Seed, op, c.FailBeforeCommit, c.LoseResponse, c.Throttle, c.Slow)
}

func (c Chaos) validate() error {
	ps := []float64{c.FailBeforeCommit, c.LoseResponse, c.Throttle, c.Slow}
	sum := 0.0
	for _, p := range ps {
		if p < 0 || p > 1 || p != p {
			return fmt.Errorf("provider: chaos probability %v outside [0, 1]", p)
		}
		sum += p
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("provider: chaos probabilities sum to %v, more than 1", sum)
	}
	if c.Latency < 0 || c.RetryAfter < 0 {
		return fmt.Errorf("provider: chaos durations must not be negative")
	}
	return nil
}

// chaosSource is an installed Chaos with its random source.
type chaosSource struct {
	cfg Chaos
	rng *rand.Rand
}

func newChaosSource(c Chaos) *chaosSource {
	s := uint64(c.Seed)
	return &chaosSource{cfg: c, rng: rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))}
}

// draw picks the fault for one call. It consumes one number per call, and a
// second one for a slow call's latency.
func (c *chaosSource) draw(op Op) (Fault, bool) {
	if c.cfg.Op != "" && c.cfg.Op != op {
		return Fault{}, false
	}
	u := c.rng.Float64()
	cut := 0.0
	for _, choice := range []struct {
		p    float64
		kind FaultKind
	}{
		{c.cfg.FailBeforeCommit, FaultFailBeforeCommit},
		{c.cfg.LoseResponse, FaultLoseResponse},
		{c.cfg.Throttle, FaultThrottle},
		{c.cfg.Slow, FaultSlow},
	} {
		cut += choice.p
		if u < cut {
			f := Fault{Kind: choice.kind}
			switch choice.kind {
			case FaultThrottle:
				f.RetryAfter = c.cfg.RetryAfter
			case FaultSlow:
				maxLatency := c.cfg.Latency
				if maxLatency <= 0 {
					maxLatency = time.Second
				}
				f.Latency = time.Duration(c.rng.Int64N(int64(maxLatency))) + 1
			}
			return f, true
		}
	}
	return Fault{}, false
}

// Slowdown is a degraded mode in which the provider can only take so many
// concurrent Sends per account. A worker is expected to notice (throttling,
// longer latencies) and cap its own concurrency; MaxInFlight shows whether it
// did.
type Slowdown struct {
	// Limit is the number of Sends per account the provider processes at
	// once. A Send that arrives while Limit Sends of its account are
	// already in flight is refused with a *ThrottledError. Zero means no
	// cap.
	Limit int

	// Latency is added to every Send while the slowdown lasts.
	Latency time.Duration

	// RetryAfter is the hint given to refused Sends; zero means one second.
	RetryAfter time.Duration
}

func (s Slowdown) active() bool { return s.Limit > 0 || s.Latency > 0 }

func (s Slowdown) retryAfter() time.Duration {
	if s.RetryAfter > 0 {
		return s.RetryAfter
	}
	return time.Second
}

// outage is a window [from, to) in which every call fails.
type outage struct{ from, to time.Time }

func (o outage) covers(t time.Time) bool { return !t.Before(o.from) && t.Before(o.to) }
