package provider_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/provider"
)

func TestErrorClassification(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("send %q: %w", "k1", err) }
	timeout := func(cause error) error {
		return fmt.Errorf("send %q: %w (%w)", "k1", provider.ErrTimeout, cause)
	}
	tests := []struct {
		name          string
		err           error
		wantRetryable bool
		wantAmbiguous bool
	}{
		{"nil", nil, false, false},
		{"invalid request", wrap(provider.ErrInvalidRequest), false, false},
		{"unauthorized", wrap(provider.ErrUnauthorized), false, false},
		{"parameter mismatch", wrap(provider.ErrParameterMismatch), false, false},
		{"not found", wrap(provider.ErrNotFound), false, false},
		{"unavailable", wrap(provider.ErrUnavailable), true, false},
		{"throttled", wrap(&provider.ThrottledError{RetryAfter: time.Second}), true, false},
		{"bare ErrThrottled", provider.ErrThrottled, true, false},
		{"in progress", wrap(provider.ErrInProgress), true, false},
		{"timeout on a deadline", timeout(context.DeadlineExceeded), true, true},
		{"timeout on a cancellation", timeout(context.Canceled), false, true},
		{"bare context cancellation", context.Canceled, false, false},
		{"unknown error", errors.New("disk on fire"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := provider.Retryable(tt.err); got != tt.wantRetryable {
				t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.wantRetryable)
			}
			if got := provider.Ambiguous(tt.err); got != tt.wantAmbiguous {
				t.Errorf("Ambiguous(%v) = %v, want %v", tt.err, got, tt.wantAmbiguous)
			}
		})
	}
}

func TestRetryAfterExtractsTheHint(t *testing.T) {
	err := fmt.Errorf("send %q: %w", "k1", &provider.ThrottledError{RetryAfter: 1500 * time.Millisecond})
	if d, ok := provider.RetryAfter(err); !ok || d != 1500*time.Millisecond {
		t.Fatalf("RetryAfter(%v) = %v, %v, want 1.5s, true", err, d, ok)
	}
	if d, ok := provider.RetryAfter(provider.ErrUnavailable); ok {
		t.Fatalf("RetryAfter(ErrUnavailable) = %v, true, want no hint", d)
	}
	if d, ok := provider.RetryAfter(provider.ErrThrottled); ok {
		t.Fatalf("RetryAfter(ErrThrottled) = %v, true, want no hint (the sentinel carries none)", d)
	}
}

func TestErrorMessagesNameTheOperationAndKey(t *testing.T) {
	p := provider.New(provider.Options{})
	ctx := context.Background()
	if _, err := p.Send(ctx, acme, "k1", contract); err != nil {
		t.Fatalf("Send(k1) = %v, want success", err)
	}
	p.Script(provider.Throttle(2 * time.Second))
	_, throttled := p.Send(ctx, acme, "k2", contract)
	_, mismatch := p.Send(ctx, acme, "k1", nda)
	_, notFound := p.Status(ctx, acme, "k9")
	_, invalid := p.Send(ctx, acme, "k3", provider.SendRequest{Recipient: ann})

	tests := []struct {
		err  error
		want string
	}{
		{throttled, `send "k2": provider: throttled: retry after 2s`},
		{mismatch, `send "k1": provider: idempotency key reused with different parameters: ` +
			`document_id "nda-2", was "contract-7"; recipient "bob@example.com", was "ann@example.com"; subject "", was "Please sign"`},
		{notFound, `status "k9": provider: no signing request with this key`},
		{invalid, `send "k3": provider: invalid request: empty document id`},
	}
	for _, tt := range tests {
		if tt.err == nil || tt.err.Error() != tt.want {
			t.Errorf("error = %v,\nwant %s", tt.err, tt.want)
		}
	}
}
