package provider_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/provider"
)

func TestSendCommitsOneDelivery(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		got := mustSend(t, api, acme, "k1", contract)
		want := provider.Receipt{
			RequestID:  "sr_000001",
			Key:        "k1",
			DocumentID: contract.DocumentID,
			Recipient:  ann,
			Status:     provider.StatusSent,
			CreatedAt:  fakeclock.Epoch,
		}
		if got != want {
			t.Fatalf("Send(k1) = %+v, want %+v", got, want)
		}
		wantReceived(t, p, ann, 1)
		wantReceived(t, p, bob, 0)

		wantDelivery := provider.Delivery{
			RequestID:  "sr_000001",
			Account:    acme,
			Key:        "k1",
			DocumentID: contract.DocumentID,
			Recipient:  ann,
			Subject:    contract.Subject,
			At:         fakeclock.Epoch,
		}
		ds := p.Deliveries(ann)
		if len(ds) != 1 || !ds[0].At.Equal(wantDelivery.At) {
			t.Fatalf("Deliveries(%s) = %+v, want [%+v]", ann, ds, wantDelivery)
		}
		ds[0].At = wantDelivery.At
		if ds[0] != wantDelivery {
			t.Fatalf("Deliveries(%s)[0] = %+v, want %+v", ann, ds[0], wantDelivery)
		}
		if all := p.AllDeliveries(); len(all) != 1 {
			t.Fatalf("AllDeliveries() has %d entries, want 1", len(all))
		}
		if got := mustStatus(t, api, acme, "k1"); got != want {
			t.Fatalf("Status(k1) = %+v, want %+v", got, want)
		}
	})
}

func TestReplayReturnsOriginalReceiptWithoutDelivering(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		first := mustSend(t, api, acme, "k1", contract)
		fakeclock.Advance(time.Minute)
		for i := range 3 {
			again := mustSend(t, api, acme, "k1", contract)
			if !again.Replayed {
				t.Fatalf("Send(k1) #%d: Replayed = false, want true", i+2)
			}
			if withoutReplayed(again) != first {
				t.Fatalf("Send(k1) #%d = %+v, want the original %+v", i+2, again, first)
			}
		}
		wantReceived(t, p, ann, 1)
		if st := p.Stats(acme); st.Committed != 1 || st.Replayed != 3 || st.Sends != 4 {
			t.Fatalf("Stats(acme) = %+v, want Sends 4, Committed 1, Replayed 3", st)
		}
	})
}

func TestSameKeyWithDifferentParametersIsAMismatch(t *testing.T) {
	tests := []struct {
		name   string
		change func(r provider.SendRequest) provider.SendRequest
	}{
		{"other document", func(r provider.SendRequest) provider.SendRequest { r.DocumentID = "contract-8"; return r }},
		{"other recipient", func(r provider.SendRequest) provider.SendRequest { r.Recipient = bob; return r }},
		{"other subject", func(r provider.SendRequest) provider.SendRequest { r.Subject = "Sign now"; return r }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
				first := mustSend(t, api, acme, "k1", contract)
				_, err := api.Send(context.Background(), acme, "k1", tt.change(contract))
				wantErr(t, "Send(k1) with "+tt.name, err, provider.ErrParameterMismatch)
				if provider.Retryable(err) {
					t.Fatalf("Retryable(%v) = true, want false: a mismatch is a caller bug", err)
				}
				wantReceived(t, p, ann, 1)
				wantReceived(t, p, bob, 0)
				// The key still belongs to the first request.
				if again := mustSend(t, api, acme, "k1", contract); again.RequestID != first.RequestID {
					t.Fatalf("Send(k1) after mismatch = %s, want %s", again.RequestID, first.RequestID)
				}
			})
		})
	}
}

func TestDuplicateWhileFirstCallIsInFlightGetsInProgress(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		start := time.Now()
		p.Script(provider.Slow(10 * time.Second))
		first := goSend(context.Background(), api, acme, "k1", contract)
		fakeclock.Wait()

		_, err := api.Send(context.Background(), acme, "k1", contract)
		wantErr(t, "Send(k1) while the first is in flight", err, provider.ErrInProgress)
		_, err = api.Status(context.Background(), acme, "k1")
		wantErr(t, "Status(k1) while the first is in flight", err, provider.ErrInProgress)
		// A mismatch is reported even while the first is in flight.
		_, err = api.Send(context.Background(), acme, "k1", nda)
		wantErr(t, "Send(k1, other document) while in flight", err, provider.ErrParameterMismatch)
		wantReceived(t, p, ann, 0)

		fakeclock.Advance(10 * time.Second)
		res := <-first
		if res.err != nil {
			t.Fatalf("first Send(k1) = %v, want success", res.err)
		}
		if !res.r.CreatedAt.Equal(start.Add(10 * time.Second)) {
			t.Fatalf("first Send(k1) committed at %v, want at the end of its 10s latency", res.r.CreatedAt)
		}
		if again := mustSend(t, api, acme, "k1", contract); again.RequestID != res.r.RequestID || !again.Replayed {
			t.Fatalf("Send(k1) after the first finished = %+v, want a replay of %s", again, res.r.RequestID)
		}
		wantReceived(t, p, ann, 1)
		if got := p.Stats(acme).InProgress; got != 2 {
			t.Fatalf("Stats(acme).InProgress = %d, want 2", got)
		}
	})
}

func TestRetentionWindowBoundary(t *testing.T) {
	const retention = time.Hour
	eachBackend(t, provider.Options{Retention: retention}, func(t *testing.T, p *provider.Provider, api provider.API) {
		first := mustSend(t, api, acme, "k1", contract)

		fakeclock.Advance(retention - time.Nanosecond)
		if got := mustStatus(t, api, acme, "k1"); got != first {
			t.Fatalf("Status(k1) at Retention-1ns = %+v, want %+v", got, first)
		}
		if again := mustSend(t, api, acme, "k1", contract); again.RequestID != first.RequestID {
			t.Fatalf("Send(k1) at Retention-1ns = %s, want the original %s (still deduplicated)", again.RequestID, first.RequestID)
		}
		wantReceived(t, p, ann, 1)

		fakeclock.Advance(time.Nanosecond)
		_, err := api.Status(context.Background(), acme, "k1")
		wantErr(t, "Status(k1) at Retention", err, provider.ErrNotFound)
		second := mustSend(t, api, acme, "k1", contract)
		if second.RequestID == first.RequestID || second.Replayed {
			t.Fatalf("Send(k1) at Retention = %+v, want a new request (the key was forgotten)", second)
		}
		wantReceived(t, p, ann, 2)
		if got := mustStatus(t, api, acme, "k1"); got != second {
			t.Fatalf("Status(k1) after reuse = %+v, want the new %+v", got, second)
		}
	})
}

func TestRetentionCountsFromCommitNotArrival(t *testing.T) {
	const retention = time.Hour
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{Retention: retention})
		p.Script(provider.Slow(5 * time.Second))
		first := mustSend(t, p, acme, "k1", contract) // commits at t=5s

		fakeclock.Advance(retention - time.Nanosecond) // t = 5s + Retention - 1ns
		if again := mustSend(t, p, acme, "k1", contract); again.RequestID != first.RequestID {
			t.Fatalf("Send(k1) 1ns before commit+Retention = %s, want the original %s", again.RequestID, first.RequestID)
		}
		fakeclock.Advance(time.Nanosecond)
		if again := mustSend(t, p, acme, "k1", contract); again.RequestID == first.RequestID {
			t.Fatalf("Send(k1) at commit+Retention = %s, want a new request", again.RequestID)
		}
		wantReceived(t, p, ann, 2)
	})
}

func TestDefaultRetentionIs24Hours(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		if got := p.Retention(); got != 24*time.Hour {
			t.Fatalf("Retention() = %v, want 24h", got)
		}
		mustSend(t, p, acme, "k1", contract)
		fakeclock.Advance(24*time.Hour - time.Nanosecond)
		mustSend(t, p, acme, "k1", contract)
		wantReceived(t, p, ann, 1)
		fakeclock.Advance(time.Nanosecond)
		mustSend(t, p, acme, "k1", contract)
		wantReceived(t, p, ann, 2)
	})
}

func TestKeysAreScopedToTheAccount(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		a := mustSend(t, api, acme, "k1", contract)
		// Same key, other account, other parameters: not a mismatch, not a
		// replay, a request of its own.
		g := mustSend(t, api, globex, "k1", nda)
		if g.RequestID == a.RequestID || g.Replayed {
			t.Fatalf("Send(k1) from globex = %+v, want a request of its own (acme's is %s)", g, a.RequestID)
		}
		if got := mustStatus(t, api, acme, "k1"); got.RequestID != a.RequestID {
			t.Fatalf("Status(k1) for acme = %s, want %s", got.RequestID, a.RequestID)
		}
		if got := mustStatus(t, api, globex, "k1"); got.RequestID != g.RequestID {
			t.Fatalf("Status(k1) for globex = %s, want %s", got.RequestID, g.RequestID)
		}
		_, err := api.Status(context.Background(), "initech", "k1")
		wantErr(t, "Status(k1) for an account that never used it", err, provider.ErrNotFound)

		// Account and key are not joined into one string: ("ab", "c") is
		// not ("a", "bc").
		x := mustSend(t, api, "ab", "c", contract)
		y := mustSend(t, api, "a", "bc", contract)
		if x.RequestID == y.RequestID {
			t.Fatalf(`Send("a", "bc") = %s, the same request as Send("ab", "c")`, y.RequestID)
		}
		wantReceived(t, p, ann, 3)
		wantReceived(t, p, bob, 1)
	})
}

func TestInvalidRequestsAreRejectedWithoutDelivery(t *testing.T) {
	long := strings.Repeat("k", provider.MaxKeyLen+1)
	tests := []struct {
		name    string
		opts    provider.Options
		account string
		key     string
		req     provider.SendRequest
		want    error
	}{
		{"empty account", provider.Options{}, "", "k1", contract, provider.ErrUnauthorized},
		{"unknown account", provider.Options{Accounts: []string{globex}}, acme, "k1", contract, provider.ErrUnauthorized},
		{"account with a newline", provider.Options{}, "ac\nme", "k1", contract, provider.ErrUnauthorized},
		{"empty key", provider.Options{}, acme, "", contract, provider.ErrInvalidRequest},
		{"key too long", provider.Options{}, acme, long, contract, provider.ErrInvalidRequest},
		{"key with a newline", provider.Options{}, acme, "k\n1", contract, provider.ErrInvalidRequest},
		{"key with surrounding spaces", provider.Options{}, acme, " k1 ", contract, provider.ErrInvalidRequest},
		{"empty document", provider.Options{}, acme, "k1", provider.SendRequest{Recipient: ann}, provider.ErrInvalidRequest},
		{"empty recipient", provider.Options{}, acme, "k1", provider.SendRequest{DocumentID: "d"}, provider.ErrInvalidRequest},
		{"recipient without @", provider.Options{}, acme, "k1", provider.SendRequest{DocumentID: "d", Recipient: "ann.example.com"}, provider.ErrInvalidRequest},
		{"recipient without domain", provider.Options{}, acme, "k1", provider.SendRequest{DocumentID: "d", Recipient: "ann@"}, provider.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, tt.opts, func(t *testing.T, p *provider.Provider, api provider.API) {
				// Validation comes before the outage and the fault script.
				p.Outage(time.Now(), time.Now().Add(time.Hour))
				p.Script(provider.LoseResponse())
				_, err := api.Send(context.Background(), tt.account, tt.key, tt.req)
				wantErr(t, fmt.Sprintf("Send(%q)", tt.key), err, tt.want)
				if provider.Retryable(err) {
					t.Fatalf("Retryable(%v) = true, want false", err)
				}
				if n := len(p.AllDeliveries()); n != 0 {
					t.Fatalf("%d deliveries after an invalid Send, want 0", n)
				}
				if n := p.PendingFaults(); n != 1 {
					t.Fatalf("PendingFaults() = %d, want 1: a rejected call consumes no fault", n)
				}
			})
		})
	}
}

func TestInvalidStatusLookups(t *testing.T) {
	tests := []struct {
		name    string
		account string
		key     string
		want    error
	}{
		{"empty account", "", "k1", provider.ErrUnauthorized},
		{"empty account and key", "", "", provider.ErrUnauthorized},
		{"empty key", acme, "", provider.ErrInvalidRequest},
		{"key too long", acme, strings.Repeat("k", provider.MaxKeyLen+1), provider.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
				_, err := api.Status(context.Background(), tt.account, tt.key)
				wantErr(t, fmt.Sprintf("Status(%q)", tt.key), err, tt.want)
				if got := p.Stats(tt.account).Rejected; got != 1 {
					t.Fatalf("Stats(%q).Rejected = %d, want 1", tt.account, got)
				}
			})
		})
	}
}

func TestConcurrentSendsWithOneKeyDeliverOnce(t *testing.T) {
	const callers = 20
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		var wg sync.WaitGroup
		results := make([]result, callers)
		for i := range callers {
			wg.Go(func() {
				r, err := api.Send(context.Background(), acme, "k1", contract)
				results[i] = result{r, err}
			})
		}
		wg.Wait()

		ids := map[string]bool{}
		for i, res := range results {
			switch {
			case res.err == nil:
				ids[res.r.RequestID] = true
			case !errors.Is(res.err, provider.ErrInProgress):
				t.Fatalf("caller %d: Send(k1) = %v, want a receipt or ErrInProgress", i, res.err)
			}
		}
		if len(ids) > 1 {
			t.Fatalf("callers got %d different request ids %v, want one", len(ids), ids)
		}
		wantReceived(t, p, ann, 1)
		final := mustSend(t, api, acme, "k1", contract)
		if len(ids) == 1 && !ids[final.RequestID] {
			t.Fatalf("Send(k1) afterwards = %s, want one of %v", final.RequestID, ids)
		}
	})
}

func TestConcurrentSendsWithOneKeyWhileSlowDeliverOnce(t *testing.T) {
	const callers = 20
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		p.Script(provider.Slow(time.Second))
		first := goSend(context.Background(), api, acme, "k1", contract)
		fakeclock.Wait()
		var wg sync.WaitGroup
		errs := make([]error, callers-1)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = api.Send(context.Background(), acme, "k1", contract)
			})
		}
		wg.Wait()
		for i, err := range errs {
			wantErr(t, fmt.Sprintf("caller %d: Send(k1) while the first is in flight", i+1), err, provider.ErrInProgress)
		}
		fakeclock.Advance(time.Second)
		if res := <-first; res.err != nil {
			t.Fatalf("first Send(k1) = %v, want success", res.err)
		}
		wantReceived(t, p, ann, 1)
	})
}

func TestConcurrentSendsWithDistinctKeysAllDeliver(t *testing.T) {
	const callers = 20
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				if _, err := p.Send(context.Background(), acme, fmt.Sprintf("k%d", i), contract); err != nil {
					t.Errorf("Send(k%d) = %v, want success", i, err)
				}
			})
		}
		wg.Wait()
		wantReceived(t, p, ann, callers)
		ids := map[string]bool{}
		for _, d := range p.Deliveries(ann) {
			ids[d.RequestID] = true
		}
		if len(ids) != callers {
			t.Fatalf("%d distinct request ids, want %d", len(ids), callers)
		}
	})
}

func TestCallWithContextAlreadyDoneDoesNothing(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := api.Send(ctx, acme, "k1", contract)
		wantErr(t, "Send(k1) with a cancelled context", err, provider.ErrTimeout)
		wantErr(t, "Send(k1) with a cancelled context", err, context.Canceled)
		wantReceived(t, p, ann, 0)
	})
}
