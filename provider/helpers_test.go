package provider_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/provider"
)

// Fixtures shared by the tests.
const (
	acme   = "acme"
	globex = "globex"
	ann    = "ann@example.com"
	bob    = "bob@example.com"
)

var (
	contract = provider.SendRequest{DocumentID: "contract-7", Recipient: ann, Subject: "Please sign"}
	nda      = provider.SendRequest{DocumentID: "nda-2", Recipient: bob}
)

// backend is one way of calling the provider: directly or over HTTP.
type backend struct {
	name string
	open func(t *testing.T, p *provider.Provider) provider.API
}

var backends = []backend{
	{"in-process", func(t *testing.T, p *provider.Provider) provider.API { return p }},
	{"http", func(t *testing.T, p *provider.Provider) provider.API {
		srv := provider.NewServer(p)
		t.Cleanup(func() { srv.Close() })
		return srv.Client()
	}},
}

// eachBackend runs f once per backend, each in its own fakeclock bubble with
// a fresh Provider, so that the in-process API and the HTTP client are held
// to the same behaviour.
func eachBackend(t *testing.T, opts provider.Options, f func(t *testing.T, p *provider.Provider, api provider.API)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			fakeclock.Run(t, func(t *testing.T) {
				p := newProvider(t, opts)
				f(t, p, b.open(t, p))
			})
		})
	}
}

// newProvider returns a Provider whose timeline is logged if the test fails.
func newProvider(tb testing.TB, opts provider.Options) *provider.Provider {
	tb.Helper()
	p := provider.New(opts)
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("provider timeline:\n%s", p.Timeline())
		}
	})
	return p
}

// mustSend sends and fails the test on an error.
func mustSend(tb testing.TB, api provider.API, account, key string, req provider.SendRequest) provider.Receipt {
	tb.Helper()
	r, err := api.Send(context.Background(), account, key, req)
	if err != nil {
		tb.Fatalf("Send(%s) = %v, want success", key, err)
	}
	return r
}

// mustStatus looks a key up and fails the test on an error.
func mustStatus(tb testing.TB, api provider.API, account, key string) provider.Receipt {
	tb.Helper()
	r, err := api.Status(context.Background(), account, key)
	if err != nil {
		tb.Fatalf("Status(%s) = %v, want the committed receipt", key, err)
	}
	return r
}

// wantErr checks that err matches target with errors.Is.
func wantErr(tb testing.TB, call string, err, target error) {
	tb.Helper()
	if !errors.Is(err, target) {
		tb.Fatalf("%s = %v, want an error matching %q", call, err, target)
	}
}

// wantReceived checks how many signing requests a recipient got.
func wantReceived(tb testing.TB, p *provider.Provider, recipient string, want int) {
	tb.Helper()
	if got := p.Received(recipient); got != want {
		tb.Fatalf("Received(%s) = %d, want %d", recipient, got, want)
	}
}

// wantElapsed checks the virtual time since start.
func wantElapsed(tb testing.TB, what string, start time.Time, want time.Duration) {
	tb.Helper()
	if got := time.Since(start); got != want {
		tb.Fatalf("%s returned after %v, want %v", what, got, want)
	}
}

// result is one call's outcome, passed back from a goroutine.
type result struct {
	r   provider.Receipt
	err error
}

// goSend starts a Send in a goroutine and returns where its result will
// arrive.
func goSend(ctx context.Context, api provider.API, account, key string, req provider.SendRequest) <-chan result {
	ch := make(chan result, 1)
	go func() {
		r, err := api.Send(ctx, account, key, req)
		ch <- result{r, err}
	}()
	return ch
}

// withoutReplayed returns r with Replayed cleared, to compare a replay with
// the original.
func withoutReplayed(r provider.Receipt) provider.Receipt {
	r.Replayed = false
	return r
}
