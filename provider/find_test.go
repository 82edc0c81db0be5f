package provider_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/provider"
)

func TestFindOutlivesTheRetentionWindow(t *testing.T) {
	const retention = time.Hour
	eachBackend(t, provider.Options{Retention: retention}, func(t *testing.T, p *provider.Provider, api provider.API) {
		req := contract
		req.Reference = "op-1"

		// The first attempt commits and loses its response.
		p.Script(provider.LoseResponse())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := api.Send(ctx, acme, "op-1", req)
		wantErr(t, "Send(op-1)", err, provider.ErrTimeout)

		// The worker comes back after the key has been forgotten.
		fakeclock.Advance(2 * retention)
		_, err = api.Status(context.Background(), acme, "op-1")
		wantErr(t, "Status(op-1) after the retention window", err, provider.ErrNotFound)
		found, err := api.Find(context.Background(), acme, "op-1")
		if err != nil {
			t.Fatalf("Find(op-1) = %v, want the committed request", err)
		}
		d := p.Deliveries(ann)[0]
		want := provider.Receipt{
			RequestID:  d.RequestID,
			Key:        "op-1",
			DocumentID: contract.DocumentID,
			Recipient:  ann,
			Reference:  "op-1",
			Status:     provider.StatusSent,
			CreatedAt:  fakeclock.Epoch,
		}
		if len(found) != 1 || found[0] != want {
			t.Fatalf("Find(op-1) = %+v, want [%+v]", found, want)
		}

		// Resubmitting blindly would have sent it twice, and Find shows it.
		mustSend(t, api, acme, "op-1", req)
		wantReceived(t, p, ann, 2)
		found, err = api.Find(context.Background(), acme, "op-1")
		if err != nil || len(found) != 2 || found[0].RequestID != d.RequestID {
			t.Fatalf("Find(op-1) after a blind resubmit = %+v, %v, want both requests, oldest first", found, err)
		}
	})
}

func TestFindWithNoMatchIsAnEmptyList(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		req := contract
		req.Reference = "op-1"
		mustSend(t, api, acme, "op-1", req)

		for _, c := range []struct{ account, reference string }{
			{acme, "op-2"},   // another reference
			{globex, "op-1"}, // another account: references are scoped too
		} {
			found, err := api.Find(context.Background(), c.account, c.reference)
			if err != nil || found == nil || len(found) != 0 {
				t.Fatalf("Find(%s, %s) = %#v, %v, want an empty, non-nil list", c.account, c.reference, found, err)
			}
		}
		if got := p.Stats(acme).Finds; got != 1 {
			t.Fatalf("Stats(acme).Finds = %d, want 1", got)
		}
	})
}

func TestFindValidationAndFaults(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		_, err := api.Find(context.Background(), acme, "")
		wantErr(t, "Find(empty reference)", err, provider.ErrInvalidRequest)
		_, err = api.Find(context.Background(), "", "op-1")
		wantErr(t, "Find(op-1) without an account", err, provider.ErrUnauthorized)

		p.Script(
			provider.FailBeforeCommit().On(provider.OpFind),
			provider.Throttle(time.Second).On(provider.OpFind),
			provider.LoseResponse().On(provider.OpFind).ForKey("op-1"),
		)
		_, err = api.Find(context.Background(), acme, "op-1")
		wantErr(t, "Find(op-1) #1", err, provider.ErrUnavailable)
		_, err = api.Find(context.Background(), acme, "op-1")
		wantErr(t, "Find(op-1) #2", err, provider.ErrThrottled)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = api.Find(ctx, acme, "op-1")
		wantErr(t, "Find(op-1) #3", err, provider.ErrTimeout)

		p.Outage(time.Now(), time.Now().Add(time.Minute))
		_, err = api.Find(context.Background(), acme, "op-1")
		wantErr(t, "Find(op-1) during an outage", err, provider.ErrUnavailable)
	})
}

func TestReferenceIsValidatedAndPartOfTheParameters(t *testing.T) {
	eachBackend(t, provider.Options{}, func(t *testing.T, p *provider.Provider, api provider.API) {
		for _, ref := range []string{"op\n1", " op-1", strings.Repeat("r", provider.MaxKeyLen+1)} {
			req := contract
			req.Reference = ref
			_, err := api.Send(context.Background(), acme, "k1", req)
			wantErr(t, "Send(k1) with reference "+strings.TrimSpace(ref[:4]), err, provider.ErrInvalidRequest)
		}
		req := contract
		req.Reference = "op-1"
		mustSend(t, api, acme, "k1", req)
		req.Reference = "op-2"
		_, err := api.Send(context.Background(), acme, "k1", req)
		wantErr(t, "Send(k1) with another reference", err, provider.ErrParameterMismatch)
		wantReceived(t, p, ann, 1)
	})
}
