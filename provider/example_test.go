package provider_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fourth-outcome/labkit/provider"
)

// A worker sends a document, and crashes right after the provider commits
// it, before the answer arrives. The restarted worker must not send again
// blindly: it reuses the operation id as the idempotency key, and either
// looks the key up or retries with it.
func Example() {
	p := provider.New(provider.Options{})
	ctx := context.Background()
	req := provider.SendRequest{DocumentID: "contract-7", Recipient: "ann@example.com"}

	attempt, crash := context.WithCancel(ctx)
	p.OnCommit(func(provider.Delivery) { crash() }) // the crash point
	_, err := p.Send(attempt, "acme", "op-42", req)
	fmt.Println("first attempt:", err)
	fmt.Println("ambiguous:", provider.Ambiguous(err))
	p.OnCommit(nil)

	r, err := p.Status(ctx, "acme", "op-42")
	fmt.Println("status:", r.RequestID, r.Status, err)

	r, err = p.Send(ctx, "acme", "op-42", req)
	fmt.Println("retry:", r.RequestID, "replayed:", r.Replayed, err)

	fmt.Println("signing requests ann received:", p.Received("ann@example.com"))
	// Output:
	// first attempt: send "op-42": provider: no response (outcome unknown) (context canceled)
	// ambiguous: true
	// status: sr_000001 sent <nil>
	// retry: sr_000001 replayed: true <nil>
	// signing requests ann received: 1
}

// Faults are queued with Script and hit the next matching calls in order.
func ExampleProvider_Script() {
	p := provider.New(provider.Options{})
	ctx := context.Background()
	req := provider.SendRequest{DocumentID: "contract-7", Recipient: "ann@example.com"}

	p.Script(
		provider.FailBeforeCommit(),
		provider.Throttle(2*time.Second),
	)
	for attempt := 1; ; attempt++ {
		r, err := p.Send(ctx, "acme", "op-42", req)
		if err == nil {
			fmt.Printf("attempt %d: %s\n", attempt, r.RequestID)
			break
		}
		wait, _ := provider.RetryAfter(err)
		fmt.Printf("attempt %d: %v (retryable %v, retry after %v)\n", attempt, err, provider.Retryable(err), wait)
	}
	_, err := p.Send(ctx, "acme", "op-42", provider.SendRequest{DocumentID: "nda-2", Recipient: "ann@example.com"})
	fmt.Println(errors.Is(err, provider.ErrParameterMismatch), provider.Retryable(err))
	// Output:
	// attempt 1: send "op-42": provider: service unavailable: injected failure before commit (retryable true, retry after 0s)
	// attempt 2: send "op-42": provider: throttled: retry after 2s (retryable true, retry after 2s)
	// attempt 3: sr_000001
	// true false
}

// NewServer puts the HTTP API in front of a Provider, in memory; the Client
// it returns satisfies the same API interface.
func ExampleNewServer() {
	p := provider.New(provider.Options{})
	srv := provider.NewServer(p)
	defer srv.Close()

	var api provider.API = srv.Client()
	req := provider.SendRequest{DocumentID: "contract-7", Recipient: "ann@example.com"}
	r, err := api.Send(context.Background(), "acme", "op-42", req)
	fmt.Println(r.RequestID, r.Status, err)

	_, err = api.Status(context.Background(), "acme", "op-43")
	fmt.Println(errors.Is(err, provider.ErrNotFound))
	// Output:
	// sr_000001 sent <nil>
	// true
}
