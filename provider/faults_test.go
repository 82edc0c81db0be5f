package provider_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/provider"
)

func TestFailBeforeCommitDeliversNothing(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		p.Script(provider.FailBeforeCommit())
		_, err := api.Send(context.Background(), acme, "k1", contract)
		wantErr(t, "Send(k1)", err, provider.ErrUnavailable)
		if !provider.Retryable(err) || provider.Ambiguous(err) {
			t.Fatalf("Send(k1) = %v: Retryable %v, Ambiguous %v, want retryable and not ambiguous",
				err, provider.Retryable(err), provider.Ambiguous(err))
		}
		wantReceived(t, p, ann, 0)
		_, err = api.Status(context.Background(), acme, "k1")
		wantErr(t, "Status(k1) after a failure before commit", err, provider.ErrNotFound)

		// The retry with the same key goes through.
		mustSend(t, api, acme, "k1", contract)
		wantReceived(t, p, ann, 1)
	})
}

func TestLostResponseCommitsButTheCallerTimesOut(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		p.Script(provider.LoseResponse())
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := api.Send(ctx, acme, "k1", contract)
		wantElapsed(t, "Send(k1) with a lost response", start, 5*time.Second)
		wantErr(t, "Send(k1) with a lost response", err, provider.ErrTimeout)
		wantErr(t, "Send(k1) with a lost response", err, context.DeadlineExceeded)
		if r != (provider.Receipt{}) {
			t.Fatalf("Send(k1) with a lost response returned receipt %+v, want none", r)
		}
		if !provider.Ambiguous(err) || !provider.Retryable(err) {
			t.Fatalf("Send(k1) = %v: Ambiguous %v, Retryable %v, want both true",
				err, provider.Ambiguous(err), provider.Retryable(err))
		}

		// The customer got it nonetheless, at t=0.
		wantReceived(t, p, ann, 1)
		d := p.Deliveries(ann)[0]
		if !d.At.Equal(start) {
			t.Fatalf("delivery at %v, want at the start (the commit precedes the lost response)", d.At)
		}
		got := mustStatus(t, api, acme, "k1")
		if got.RequestID != d.RequestID || got.Status != provider.StatusSent {
			t.Fatalf("Status(k1) = %+v, want %s sent", got, d.RequestID)
		}
		// Retrying with the same key replays; nothing is sent twice.
		if again := mustSend(t, api, acme, "k1", contract); again.RequestID != d.RequestID || !again.Replayed {
			t.Fatalf("Send(k1) retry = %+v, want a replay of %s", again, d.RequestID)
		}
		wantReceived(t, p, ann, 1)
		if got := p.Stats(acme).LostResponses; got != 1 {
			t.Fatalf("Stats(acme).LostResponses = %d, want 1", got)
		}
	})
}

func TestLostResponseWithoutDeadlineWaitsForTheResponseTimeout(t *testing.T) {
	tests := []struct {
		name string
		opts provider.Options
		want time.Duration
	}{
		{"default", provider.Options{}, provider.DefaultResponseTimeout},
		{"configured", provider.Options{ResponseTimeout: 7 * time.Second}, 7 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, tt.opts, func(t *testing.T, p *provider.Provider, api provider.API) {
				p.Script(provider.LoseResponse())
				start := time.Now()
				_, err := api.Send(context.Background(), acme, "k1", contract)
				wantElapsed(t, "Send(k1) with a lost response and no deadline", start, tt.want)
				wantErr(t, "Send(k1)", err, provider.ErrTimeout)
				wantErr(t, "Send(k1)", err, context.DeadlineExceeded)
				wantReceived(t, p, ann, 1)
			})
		})
	}
}

func TestLostResponseThenCancelIsAmbiguousButNotRetryable(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		p.Script(provider.LoseResponse())
		ctx, cancel := context.WithCancel(context.Background())
		res := goSend(ctx, p, acme, "k1", contract)
		fakeclock.Advance(2 * time.Second)
		cancel()
		err := (<-res).err
		wantErr(t, "Send(k1) cancelled while its response is lost", err, context.Canceled)
		wantErr(t, "Send(k1) cancelled while its response is lost", err, provider.ErrTimeout)
		if provider.Retryable(err) || !provider.Ambiguous(err) {
			t.Fatalf("Send(k1) = %v: Retryable %v, Ambiguous %v, want not retryable (the caller gave up) but ambiguous",
				err, provider.Retryable(err), provider.Ambiguous(err))
		}
		wantReceived(t, p, ann, 1)
	})
}

func TestReplayCanLoseItsResponseToo(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		first := mustSend(t, api, acme, "k1", contract)
		p.Script(provider.LoseResponse())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := api.Send(ctx, acme, "k1", contract)
		wantErr(t, "Send(k1) replay with a lost response", err, provider.ErrTimeout)
		wantReceived(t, p, ann, 1)
		if got := mustStatus(t, api, acme, "k1"); got.RequestID != first.RequestID {
			t.Fatalf("Status(k1) = %s, want %s", got.RequestID, first.RequestID)
		}
	})
}

func TestSlowResponseCommitsAtTheEndOfItsLatency(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		p.Script(provider.Slow(2 * time.Second))
		start := time.Now()
		r := mustSend(t, api, acme, "k1", contract)
		wantElapsed(t, "Send(k1) with 2s latency", start, 2*time.Second)
		if !r.CreatedAt.Equal(start.Add(2 * time.Second)) {
			t.Fatalf("Send(k1).CreatedAt = %v, want %v", r.CreatedAt, start.Add(2*time.Second))
		}
		wantReceived(t, p, ann, 1)
	})
}

func TestSlowResponseRespectsTheCallersDeadline(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		p.Script(provider.Slow(10 * time.Second))
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := api.Send(ctx, acme, "k1", contract)
		wantElapsed(t, "Send(k1) with 10s latency and a 3s deadline", start, 3*time.Second)
		wantErr(t, "Send(k1)", err, provider.ErrTimeout)
		wantErr(t, "Send(k1)", err, context.DeadlineExceeded)
		fakeclock.Wait() // over HTTP, let the handler notice the hang-up

		// The provider abandoned the request before committing it.
		wantReceived(t, p, ann, 0)
		_, err = api.Status(context.Background(), acme, "k1")
		wantErr(t, "Status(k1) after an abandoned request", err, provider.ErrNotFound)
		if got := p.Stats(acme).Abandoned; got != 1 {
			t.Fatalf("Stats(acme).Abandoned = %d, want 1", got)
		}
		// Nothing waits for 10s in the background: the key is free.
		mustSend(t, api, acme, "k1", contract)
		wantElapsed(t, "the retry", start, 3*time.Second)
		wantReceived(t, p, ann, 1)
	})
}

func TestThrottleCarriesARetryAfterHint(t *testing.T) {
	tests := []struct {
		name  string
		fault provider.Fault
		want  time.Duration
	}{
		{"explicit hint", provider.Throttle(1500 * time.Millisecond), 1500 * time.Millisecond},
		{"default hint", provider.Throttle(0), time.Second},
		{"whole seconds", provider.Throttle(3 * time.Second), 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
				p.Script(tt.fault)
				_, err := api.Send(context.Background(), acme, "k1", contract)
				wantErr(t, "Send(k1)", err, provider.ErrThrottled)
				var te *provider.ThrottledError
				if !errors.As(err, &te) || te.RetryAfter != tt.want {
					t.Fatalf("Send(k1) = %v, want a *ThrottledError with RetryAfter %v", err, tt.want)
				}
				if d, ok := provider.RetryAfter(err); !ok || d != tt.want {
					t.Fatalf("RetryAfter(%v) = %v, %v, want %v, true", err, d, ok, tt.want)
				}
				if !provider.Retryable(err) {
					t.Fatalf("Retryable(%v) = false, want true", err)
				}
				wantReceived(t, p, ann, 0)
			})
		})
	}
}

func TestLatencyDelaysAnyFault(t *testing.T) {
	tests := []struct {
		fault provider.Fault
		want  error
	}{
		{provider.FailBeforeCommit().WithLatency(4 * time.Second), provider.ErrUnavailable},
		{provider.Throttle(time.Second).WithLatency(4 * time.Second), provider.ErrThrottled},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			fakeclock.Run(t, func(t *testing.T) {
				p := newProvider(t, provider.Options{})
				p.Script(tt.fault)
				start := time.Now()
				_, err := p.Send(context.Background(), acme, "k1", contract)
				wantElapsed(t, "Send(k1) with "+tt.fault.String(), start, 4*time.Second)
				wantErr(t, "Send(k1)", err, tt.want)

				// A deadline before the latency ends turns it into a timeout.
				p.Script(tt.fault)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_, err = p.Send(ctx, acme, "k1", contract)
				wantErr(t, "Send(k1) with a 1s deadline", err, provider.ErrTimeout)
				wantReceived(t, p, ann, 0)
			})
		})
	}
}

func TestScriptedFaultsApplyInOrderToMatchingCalls(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		p.Script(
			provider.FailBeforeCommit().On(provider.OpStatus),
			provider.Throttle(time.Second).ForAccount(globex),
			provider.FailBeforeCommit().ForKey("k2"),
			provider.Pass(),
			provider.FailBeforeCommit(),
		)
		if n := p.PendingFaults(); n != 5 {
			t.Fatalf("PendingFaults() = %d, want 5", n)
		}
		send := func(account, key string) func() error {
			return func() error { _, err := p.Send(context.Background(), account, key, contract); return err }
		}
		status := func(account, key string) func() error {
			return func() error { _, err := p.Status(context.Background(), account, key); return err }
		}
		steps := []struct {
			call string
			do   func() error
			want error // nil: success
		}{
			{"Send(acme, k1)", send(acme, "k1"), nil},                         // Pass
			{"Send(acme, k2)", send(acme, "k2"), provider.ErrUnavailable},     // ForKey(k2)
			{"Send(globex, k1)", send(globex, "k1"), provider.ErrThrottled},   // ForAccount(globex)
			{"Status(acme, k1)", status(acme, "k1"), provider.ErrUnavailable}, // On(OpStatus)
			{"Send(acme, k3)", send(acme, "k3"), provider.ErrUnavailable},     // the unfiltered one
			{"Send(acme, k4)", send(acme, "k4"), nil},                         // script used up
		}
		for _, s := range steps {
			err := s.do()
			switch {
			case s.want == nil && err != nil:
				t.Fatalf("%s = %v, want success", s.call, err)
			case s.want != nil:
				wantErr(t, s.call, err, s.want)
			}
		}
		if n := p.PendingFaults(); n != 0 {
			t.Fatalf("PendingFaults() = %d, want 0", n)
		}
	})
}

func TestStatusFaults(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		committed := mustSend(t, api, acme, "k1", contract)
		p.Script(
			provider.FailBeforeCommit().On(provider.OpStatus),
			provider.Throttle(2*time.Second).On(provider.OpStatus),
			provider.LoseResponse().On(provider.OpStatus),
			provider.Slow(3*time.Second).On(provider.OpStatus),
		)
		_, err := api.Status(context.Background(), acme, "k1")
		wantErr(t, "Status(k1) #1", err, provider.ErrUnavailable)
		_, err = api.Status(context.Background(), acme, "k1")
		wantErr(t, "Status(k1) #2", err, provider.ErrThrottled)

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = api.Status(ctx, acme, "k1")
		wantErr(t, "Status(k1) #3 with a lost response", err, provider.ErrTimeout)

		start := time.Now()
		if got := mustStatus(t, api, acme, "k1"); got != committed {
			t.Fatalf("Status(k1) #4 = %+v, want %+v", got, committed)
		}
		wantElapsed(t, "Status(k1) #4 with 3s latency", start, 3*time.Second)
		wantReceived(t, p, ann, 1)
	})
}

func TestOutageWindow(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		start := time.Now()
		p.Outage(start.Add(10*time.Second), start.Add(20*time.Second))
		checks := []struct {
			at   time.Duration
			down bool
		}{
			{10*time.Second - time.Nanosecond, false},
			{10 * time.Second, true},
			{15 * time.Second, true},
			{20*time.Second - time.Nanosecond, true},
			{20 * time.Second, false},
		}
		for i, c := range checks {
			fakeclock.Advance(c.at - time.Since(start))
			key := fmt.Sprintf("k%d", i)
			_, sendErr := api.Send(context.Background(), acme, key, contract)
			_, statusErr := api.Status(context.Background(), acme, key)
			if c.down {
				wantErr(t, fmt.Sprintf("Send(%s) at t=%v", key, c.at), sendErr, provider.ErrUnavailable)
				wantErr(t, fmt.Sprintf("Status(%s) at t=%v", key, c.at), statusErr, provider.ErrUnavailable)
				if !provider.Retryable(sendErr) {
					t.Fatalf("Retryable(%v) = false, want true", sendErr)
				}
				continue
			}
			if sendErr != nil || statusErr != nil {
				t.Fatalf("at t=%v: Send(%s) = %v, Status = %v, want both to succeed", c.at, key, sendErr, statusErr)
			}
		}
		wantReceived(t, p, ann, 2)
	})
}

func TestSlowdownThrottlesSendsBeyondTheLimit(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		p.SetSlowdown(provider.Slowdown{Limit: 3, Latency: time.Second, RetryAfter: 2 * time.Second})
		start := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, 5)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = p.Send(context.Background(), acme, fmt.Sprintf("k%d", i), contract)
			})
		}
		wg.Wait()
		wantElapsed(t, "five concurrent Sends", start, time.Second)

		ok, throttled := 0, 0
		for i, err := range errs {
			switch d, isThrottled := provider.RetryAfter(err); {
			case err == nil:
				ok++
			case isThrottled && d == 2*time.Second:
				throttled++
			default:
				t.Fatalf("Send(k%d) = %v, want success or a throttle with RetryAfter 2s", i, err)
			}
		}
		if ok != 3 || throttled != 2 {
			t.Fatalf("5 concurrent Sends with Limit 3: %d succeeded, %d throttled, want 3 and 2", ok, throttled)
		}
		wantReceived(t, p, ann, 3)
		st := p.Stats(acme)
		// Throttled Sends leave at once, so the peak is between Limit+1 and
		// 5 depending on the interleaving: above the limit either way,
		// which is what shows that the caller did not cap itself.
		if st.MaxInFlight < 4 || st.MaxInFlight > 5 || st.Throttled != 2 || st.InFlight != 0 {
			t.Fatalf("Stats(acme) = %+v, want MaxInFlight 4 or 5 (above the limit), Throttled 2, InFlight 0", st)
		}
		// Other accounts have their own limit.
		if got := p.MaxInFlight(globex); got != 0 {
			t.Fatalf("MaxInFlight(globex) = %d, want 0", got)
		}
	})
}

func TestSlowdownRewardsAWorkerThatCapsItself(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		p.SetSlowdown(provider.Slowdown{Limit: 2, Latency: time.Second})
		p.ResetMaxInFlight(acme)
		start := time.Now()

		// A worker with two submission slots sends ten documents.
		slots := make(chan struct{}, 2)
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				if _, err := p.Send(context.Background(), acme, fmt.Sprintf("k%d", i), contract); err != nil {
					t.Errorf("Send(k%d) = %v, want success from a capped worker", i, err)
				}
			})
		}
		wg.Wait()
		wantElapsed(t, "ten Sends two at a time", start, 5*time.Second)
		if got := p.MaxInFlight(acme); got != 2 {
			t.Fatalf("MaxInFlight(acme) = %d, want 2 (the worker's cap)", got)
		}
		if got := p.Stats(acme).Throttled; got != 0 {
			t.Fatalf("Stats(acme).Throttled = %d, want 0", got)
		}
		wantReceived(t, p, ann, 10)

		// Ending the slowdown removes the cap and the latency.
		p.SetSlowdown(provider.Slowdown{})
		start = time.Now()
		mustSend(t, p, acme, "k-after", contract)
		wantElapsed(t, "Send after the slowdown", start, 0)
	})
}

func TestMaxInFlightCountsConcurrentSendsWithoutSlowdown(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		p.Script(provider.Slow(time.Second), provider.Slow(time.Second), provider.Slow(time.Second))
		var results []<-chan result
		for i := range 3 {
			results = append(results, goSend(context.Background(), p, acme, fmt.Sprintf("k%d", i), contract))
		}
		fakeclock.Wait()
		if st := p.Stats(acme); st.InFlight != 3 || st.MaxInFlight != 3 {
			t.Fatalf("Stats(acme) with three slow Sends = InFlight %d, MaxInFlight %d, want 3, 3", st.InFlight, st.MaxInFlight)
		}
		fakeclock.Advance(time.Second)
		for _, r := range results {
			<-r
		}
		if st := p.Stats(acme); st.InFlight != 0 || st.MaxInFlight != 3 {
			t.Fatalf("Stats(acme) afterwards = InFlight %d, MaxInFlight %d, want 0, 3", st.InFlight, st.MaxInFlight)
		}
		p.ResetMaxInFlight(acme)
		if got := p.MaxInFlight(acme); got != 0 {
			t.Fatalf("MaxInFlight(acme) after ResetMaxInFlight = %d, want 0", got)
		}
	})
}

// runChaos makes n sequential Sends with distinct keys, each with a 1s
// deadline, under chaos with the given seed, and returns the provider's log
// and the kinds of faults drawn.
func runChaos(t *testing.T, c provider.Chaos, n int) ([]provider.Event, map[provider.FaultKind]int) {
	t.Helper()
	var events []provider.Event
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		p.SetChaos(c)
		for i := range n {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			p.Send(ctx, acme, fmt.Sprintf("k%d", i), contract)
			cancel()
		}
		events = p.Log()
	})
	kinds := map[provider.FaultKind]int{}
	for _, e := range events {
		if e.Op == provider.OpSend {
			kinds[e.Fault]++
		}
	}
	return events, kinds
}

func TestChaosIsReproducibleFromItsSeed(t *testing.T) {
	c := provider.Chaos{
		Seed:             42,
		FailBeforeCommit: 0.1,
		LoseResponse:     0.2,
		Throttle:         0.1,
		Slow:             0.2,
		Latency:          2 * time.Second,
	}
	first, kinds := runChaos(t, c, 300)
	second, _ := runChaos(t, c, 300)
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("two chaos runs with seed %d differ:\n%v\n---\n%v", c.Seed, first, second)
	}
	for _, k := range []provider.FaultKind{provider.FaultNone, provider.FaultFailBeforeCommit,
		provider.FaultLoseResponse, provider.FaultThrottle, provider.FaultSlow} {
		if kinds[k] == 0 {
			t.Errorf("seed %d: no %v in 300 calls, want some (drawn: %v)", c.Seed, k, kinds)
		}
	}
	// About 20% of 300 calls lose their response; allow a wide margin.
	if n := kinds[provider.FaultLoseResponse]; n < 30 || n > 90 {
		t.Errorf("seed %d: %d lost responses in 300 calls, want about 60", c.Seed, n)
	}
	if !strings.Contains(first[0].String(), "seed=42") {
		t.Errorf("first log event = %q, want it to record seed=42", first[0])
	}

	other := c
	other.Seed = 43
	third, _ := runChaos(t, other, 300)
	if reflect.DeepEqual(first, third) {
		t.Fatalf("chaos runs with seeds 42 and 43 are identical, want different fault sequences")
	}
}

func TestChaosOutcomesAreConsistent(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		c := provider.Chaos{Seed: 7, FailBeforeCommit: 0.25, LoseResponse: 0.25, Throttle: 0.25, Op: provider.OpSend}
		p.SetChaos(c)
		if got, ok := p.Chaos(); !ok || got != c {
			t.Fatalf("Chaos() = %+v, %v, want %+v, true", got, ok, c)
		}
		const n = 100
		committed := 0
		for i := range n {
			key := fmt.Sprintf("k%d", i)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err := p.Send(ctx, acme, key, contract)
			cancel()
			// Status is not subject to this chaos: it tells the truth.
			_, statusErr := p.Status(context.Background(), acme, key)
			switch {
			case err == nil, errors.Is(err, provider.ErrTimeout):
				committed++
				if statusErr != nil {
					t.Fatalf("seed %d: Send(%s) = %v but Status = %v, want it committed", c.Seed, key, err, statusErr)
				}
			case errors.Is(err, provider.ErrUnavailable), errors.Is(err, provider.ErrThrottled):
				wantErr(t, fmt.Sprintf("seed %d: Status(%s) after %v", c.Seed, key, err), statusErr, provider.ErrNotFound)
			default:
				t.Fatalf("seed %d: Send(%s) = %v, want success, timeout, unavailable or throttled", c.Seed, key, err)
			}
		}
		wantReceived(t, p, ann, committed)

		p.SetChaos(provider.Chaos{})
		if _, ok := p.Chaos(); ok {
			t.Fatal("Chaos() reports chaos on after SetChaos(Chaos{}), want off")
		}
	})
}

func TestInvalidChaosPanics(t *testing.T) {
	tests := []provider.Chaos{
		{FailBeforeCommit: -0.1},
		{LoseResponse: 1.5},
		{FailBeforeCommit: 0.6, LoseResponse: 0.6},
		{Slow: 0.1, Latency: -time.Second},
	}
	for _, c := range tests {
		t.Run(c.String(), func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("SetChaos(%+v) did not panic, want a panic for an invalid configuration", c)
				}
			}()
			provider.New(provider.Options{}).SetChaos(c)
		})
	}
}

func TestOnCommitHookSeesTheCommitBeforeTheAnswer(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		var seen []provider.Delivery
		p.OnCommit(func(d provider.Delivery) {
			// The hook runs outside the provider's lock.
			if _, err := p.Status(context.Background(), d.Account, d.Key); err != nil {
				t.Errorf("Status(%s) inside OnCommit = %v, want the committed receipt", d.Key, err)
			}
			seen = append(seen, d)
		})
		r := mustSend(t, api, acme, "k1", contract)
		mustSend(t, api, acme, "k1", contract) // a replay commits nothing
		if len(seen) != 1 || seen[0].RequestID != r.RequestID || seen[0].Account != acme || seen[0].Key != "k1" {
			t.Fatalf("OnCommit saw %+v, want exactly the commit of %s", seen, r.RequestID)
		}
		p.OnCommit(nil)
		mustSend(t, api, acme, "k2", contract)
		if len(seen) != 1 {
			t.Fatalf("OnCommit(nil) did not remove the hook: saw %d commits", len(seen))
		}
	})
}

func TestCrashAfterCommitInjectedFromOnCommit(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		ctx, crash := context.WithCancel(context.Background())
		defer crash()
		p.OnCommit(func(provider.Delivery) { crash() })
		_, err := api.Send(ctx, acme, "k1", contract)
		wantErr(t, "Send(k1) whose caller crashed after the commit", err, provider.ErrTimeout)
		wantErr(t, "Send(k1) whose caller crashed after the commit", err, context.Canceled)
		wantReceived(t, p, ann, 1)
		p.OnCommit(nil)
		// The restarted worker reconciles and finds the request.
		if got := mustStatus(t, api, acme, "k1"); got.RequestID != p.Deliveries(ann)[0].RequestID {
			t.Fatalf("Status(k1) = %s, want the delivered request", got.RequestID)
		}
	})
}

func TestLogRecordsATimeline(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		var hooked []provider.Event
		p.OnEvent(func(e provider.Event) { hooked = append(hooked, e) })

		fakeclock.Advance(3 * time.Second)
		p.Script(provider.LoseResponse())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		p.Send(ctx, acme, "k1", contract)
		p.Send(context.Background(), acme, "k1", contract)
		p.Send(context.Background(), acme, "k1", nda)
		p.Status(context.Background(), acme, "k2")

		want := []string{
			"t=3s account acme key k1 Send [lose-response] -> committed sr_000001 (document contract-7 to ann@example.com), response lost",
			"t=4s account acme key k1 Send -> replayed sr_000001 (no new delivery)",
			"t=4s account acme key k1 Send -> parameter mismatch",
			"t=4s account acme key k2 Status -> not found",
		}
		var got []string
		for _, e := range p.Log() {
			got = append(got, e.String())
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Log() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if tl := p.Timeline(); tl != strings.Join(want, "\n") {
			t.Fatalf("Timeline() =\n%s\nwant\n%s", tl, strings.Join(want, "\n"))
		}
		if !reflect.DeepEqual(hooked, p.Log()) {
			t.Fatalf("OnEvent saw %v, want the same events as Log() %v", hooked, p.Log())
		}
	})
}

func TestConfigurationChangesAreLogged(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		now := time.Now()
		p.SetChaos(provider.Chaos{Seed: 9, LoseResponse: 0.5})
		p.Outage(now.Add(time.Minute), now.Add(2*time.Minute))
		p.SetSlowdown(provider.Slowdown{Limit: 4})
		p.SetSlowdown(provider.Slowdown{})
		p.SetChaos(provider.Chaos{})
		want := []string{
			"t=0s provider: chaos seed=9 on all calls: fail-before-commit=0 lose-response=0.5 throttle=0 slow=0",
			"t=0s provider: outage scheduled from t=1m0s to t=2m0s",
			"t=0s provider: slowdown on: limit 4 concurrent Sends per account, +0s latency, retry-after 1s",
			"t=0s provider: slowdown off",
			"t=0s provider: chaos off",
		}
		var got []string
		for _, e := range p.Log() {
			got = append(got, e.String())
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Log() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

func TestFaultDescriptions(t *testing.T) {
	tests := []struct {
		fault provider.Fault
		want  string
	}{
		{provider.Pass(), "none"},
		{provider.FailBeforeCommit(), "fail-before-commit"},
		{provider.LoseResponse(), "lose-response"},
		{provider.Slow(2 * time.Second), "slow 2s"},
		{provider.Throttle(0), "throttle retry-after 1s"},
		{provider.LoseResponse().WithLatency(time.Second), "lose-response after 1s"},
	}
	for _, tt := range tests {
		if got := tt.fault.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.fault, got, tt.want)
		}
	}
	if got := provider.FaultKind(99).String(); got != "FaultKind(99)" {
		t.Errorf("FaultKind(99).String() = %q, want FaultKind(99)", got)
	}
}

func TestLostResponseAfterLatency(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		p.Script(provider.LoseResponse().WithLatency(2 * time.Second))
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := p.Send(ctx, acme, "k1", contract)
		wantErr(t, "Send(k1)", err, provider.ErrTimeout)
		wantElapsed(t, "Send(k1)", start, 5*time.Second)
		if d := p.Deliveries(ann); len(d) != 1 || !d[0].At.Equal(start.Add(2*time.Second)) {
			t.Fatalf("Deliveries(%s) = %+v, want one committed at t=2s", ann, d)
		}
	})
}

func TestStatusThatGetsNoAnswerIsATimeoutNotANotFound(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		// A lost lookup of an unknown key must not look like "not found".
		p.Script(provider.LoseResponse().On(provider.OpStatus))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := api.Status(ctx, acme, "k1")
		wantErr(t, "Status(k1) with a lost response", err, provider.ErrTimeout)

		// A slow lookup cut short by the caller's deadline.
		p.Script(provider.Slow(5 * time.Second).On(provider.OpStatus))
		start := time.Now()
		ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel2()
		_, err = api.Status(ctx2, acme, "k1")
		wantElapsed(t, "Status(k1) with 5s latency and a 2s deadline", start, 2*time.Second)
		wantErr(t, "Status(k1) with 5s latency and a 2s deadline", err, provider.ErrTimeout)

		// A lookup whose context is already done.
		done, cancel3 := context.WithCancel(context.Background())
		cancel3()
		_, err = api.Status(done, acme, "k1")
		wantErr(t, "Status(k1) with a cancelled context", err, provider.ErrTimeout)
		wantErr(t, "Status(k1) with a cancelled context", err, context.Canceled)
	})
}

func TestStatusOfAnInFlightKeyWithALostResponse(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		p.Script(provider.Slow(time.Minute).On(provider.OpSend), provider.LoseResponse().On(provider.OpStatus))
		first := goSend(context.Background(), p, acme, "k1", contract)
		fakeclock.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := p.Status(ctx, acme, "k1")
		wantErr(t, "Status(k1) in flight with a lost response", err, provider.ErrTimeout)
		fakeclock.Advance(time.Minute)
		if res := <-first; res.err != nil {
			t.Fatalf("Send(k1) = %v, want success", res.err)
		}
	})
}

func TestSlowReplayCutShortIsATimeout(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		mustSend(t, p, acme, "k1", contract)
		p.Script(provider.Slow(time.Minute))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := p.Send(ctx, acme, "k1", contract)
		wantErr(t, "slow replay of Send(k1) with a 1s deadline", err, provider.ErrTimeout)
		wantReceived(t, p, ann, 1)
	})
}

func TestChaosSlowLatencyStaysWithinItsBound(t *testing.T) {
	for _, bound := range []time.Duration{0, 3 * time.Second} {
		t.Run(fmt.Sprint(bound), func(t *testing.T) {
			fakeclock.Run(t, func(t *testing.T) {
				p := newProvider(t, provider.Options{})
				p.SetChaos(provider.Chaos{Seed: 1, Slow: 1, Latency: bound})
				want := bound
				if want == 0 {
					want = time.Second
				}
				for i := range 50 {
					start := time.Now()
					mustSend(t, p, acme, fmt.Sprintf("k%d", i), contract)
					if d := time.Since(start); d <= 0 || d > want {
						t.Fatalf("seed 1: Send(k%d) took %v, want within (0, %v]", i, d, want)
					}
				}
			})
		})
	}
}
