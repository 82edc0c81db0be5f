package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/provider"
)

const contractJSON = `{"document_id":"contract-7","recipient":"ann@example.com","subject":"Please sign"}`

// httpCall is one raw HTTP request to the provider.
type httpCall struct {
	method        string
	path          string
	authorization string // the whole header; "" sends none
	key           string // Idempotency-Key; "" sends none
	body          string
}

func (c httpCall) do(tb testing.TB, ctx context.Context, hc *http.Client) (*http.Response, []byte, error) {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, c.method, "http://provider.pipe"+c.path, strings.NewReader(c.body))
	if err != nil {
		tb.Fatalf("NewRequest(%s %s) = %v", c.method, c.path, err)
	}
	if c.authorization != "" {
		req.Header.Set("Authorization", c.authorization)
	}
	if c.key != "" {
		req.Header.Set(provider.HeaderIdempotencyKey, c.key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp, data, err
}

func TestHTTPStatusCodes(t *testing.T) {
	post := httpCall{method: "POST", path: provider.PathSignatureRequests, authorization: "Bearer acme", key: "k1", body: contractJSON}
	get := httpCall{method: "GET", path: provider.PathSignatureRequests + "/k1", authorization: "Bearer acme"}
	with := func(c httpCall, change func(*httpCall)) httpCall { change(&c); return c }

	tests := []struct {
		name       string
		opts       provider.Options
		setup      func(t *testing.T, p *provider.Provider)
		call       httpCall
		wantStatus int
		wantCode   string            // error code in the JSON body; "" for none
		wantHeader map[string]string // headers that must be present
		wantAfter  time.Duration     // virtual time the call takes
	}{
		{
			name: "201 for a new request", call: post, wantStatus: http.StatusCreated,
		},
		{
			name:  "200 with Idempotent-Replayed for a replay",
			setup: func(t *testing.T, p *provider.Provider) { mustSend(t, p, acme, "k1", contract) },
			call:  post, wantStatus: http.StatusOK,
			wantHeader: map[string]string{provider.HeaderReplayed: "true"},
		},
		{
			name: "200 for a search by reference",
			setup: func(t *testing.T, p *provider.Provider) {
				req := contract
				req.Reference = "op-1"
				mustSend(t, p, acme, "k1", req)
			},
			call:       with(get, func(c *httpCall) { c.path = provider.PathSignatureRequests + "?reference=op-1" }),
			wantStatus: http.StatusOK,
		},
		{
			name:  "200 for a lookup",
			setup: func(t *testing.T, p *provider.Provider) { mustSend(t, p, acme, "k1", contract) },
			call:  get, wantStatus: http.StatusOK,
		},
		{
			name: "400 for a body that is not JSON", call: with(post, func(c *httpCall) { c.body = "not json" }),
			wantStatus: http.StatusBadRequest, wantCode: "invalid_request",
		},
		{
			name: "400 for an empty document", call: with(post, func(c *httpCall) { c.body = `{"recipient":"ann@example.com"}` }),
			wantStatus: http.StatusBadRequest, wantCode: "invalid_request",
		},
		{
			name: "400 without an Idempotency-Key", call: with(post, func(c *httpCall) { c.key = "" }),
			wantStatus: http.StatusBadRequest, wantCode: "invalid_request",
		},
		{
			name: "401 without credentials", call: with(post, func(c *httpCall) { c.authorization = "" }),
			wantStatus: http.StatusUnauthorized, wantCode: "unauthorized",
			wantHeader: map[string]string{"WWW-Authenticate": "Bearer"},
		},
		{
			name: "401 for another scheme", call: with(post, func(c *httpCall) { c.authorization = "Basic YWNtZTo=" }),
			wantStatus: http.StatusUnauthorized, wantCode: "unauthorized",
		},
		{
			name: "401 for an unknown account", opts: provider.Options{Accounts: []string{globex}},
			call: post, wantStatus: http.StatusUnauthorized, wantCode: "unauthorized",
		},
		{
			name: "404 for an unknown key", call: get,
			wantStatus: http.StatusNotFound, wantCode: "not_found",
		},
		{
			name: "409 while the key is in flight",
			setup: func(t *testing.T, p *provider.Provider) {
				p.Script(provider.Slow(time.Minute))
				goSend(context.Background(), p, acme, "k1", contract) // finishes in the deferred Advance
				fakeclock.Wait()
			},
			call: post, wantStatus: http.StatusConflict, wantCode: "in_progress",
		},
		{
			name:  "422 for a parameter mismatch",
			setup: func(t *testing.T, p *provider.Provider) { mustSend(t, p, acme, "k1", nda) },
			call:  post, wantStatus: http.StatusUnprocessableEntity, wantCode: "parameter_mismatch",
		},
		{
			name:  "429 with Retry-After rounded up to whole seconds",
			setup: func(t *testing.T, p *provider.Provider) { p.Script(provider.Throttle(1500 * time.Millisecond)) },
			call:  post, wantStatus: http.StatusTooManyRequests, wantCode: "throttled",
			wantHeader: map[string]string{"Retry-After": "2"},
		},
		{
			name:  "503 for a failure before commit",
			setup: func(t *testing.T, p *provider.Provider) { p.Script(provider.FailBeforeCommit()) },
			call:  post, wantStatus: http.StatusServiceUnavailable, wantCode: "unavailable",
		},
		{
			name: "503 during an outage",
			setup: func(t *testing.T, p *provider.Provider) {
				p.Outage(time.Now(), time.Now().Add(time.Minute))
			},
			call: get, wantStatus: http.StatusServiceUnavailable, wantCode: "unavailable",
		},
		{
			name:  "504 when a lost response hits the provider-side timeout",
			opts:  provider.Options{ResponseTimeout: 20 * time.Second},
			setup: func(t *testing.T, p *provider.Provider) { p.Script(provider.LoseResponse()) },
			call:  post, wantStatus: http.StatusGatewayTimeout, wantCode: "timeout",
			wantAfter: 20 * time.Second,
		},
		{
			name: "405 for another method", call: with(get, func(c *httpCall) { c.method = "DELETE" }),
			wantStatus: http.StatusMethodNotAllowed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeclock.Run(t, func(t *testing.T) {
				p := newProvider(t, tt.opts)
				srv := provider.NewServer(p)
				defer srv.Close()
				// Let calls started by setup finish before the server closes.
				defer fakeclock.Advance(time.Hour)
				if tt.setup != nil {
					tt.setup(t, p)
				}
				start := time.Now()
				resp, body, err := tt.call.do(t, context.Background(), srv.HTTPClient())
				if err != nil {
					t.Fatalf("%s %s = %v, want HTTP %d", tt.call.method, tt.call.path, err, tt.wantStatus)
				}
				wantElapsed(t, tt.call.method+" "+tt.call.path, start, tt.wantAfter)
				if resp.StatusCode != tt.wantStatus {
					t.Fatalf("%s %s = HTTP %d %s, want %d", tt.call.method, tt.call.path, resp.StatusCode, body, tt.wantStatus)
				}
				for h, want := range tt.wantHeader {
					if got := resp.Header.Get(h); got != want {
						t.Errorf("header %s = %q, want %q", h, got, want)
					}
				}
				switch {
				case tt.wantCode != "":
					var e struct {
						Error struct {
							Code    string `json:"code"`
							Message string `json:"message"`
						} `json:"error"`
					}
					if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != tt.wantCode || e.Error.Message == "" {
						t.Fatalf("error body = %s, want code %q and a message", body, tt.wantCode)
					}
				case resp.StatusCode < 300:
					var r provider.Receipt
					if strings.Contains(tt.call.path, "?") {
						var list struct{ Data []provider.Receipt }
						if err := json.Unmarshal(body, &list); err != nil || len(list.Data) != 1 {
							t.Fatalf("body = %s, want a list of one receipt", body)
						}
						r = list.Data[0]
					} else if err := json.Unmarshal(body, &r); err != nil {
						t.Fatalf("body = %s, want a receipt: %v", body, err)
					}
					if r.RequestID == "" || r.Key != "k1" {
						t.Fatalf("body = %s, want a receipt for k1", body)
					}
				}
			})
		})
	}
}

func TestHTTPRetryAfterKeepsTheExactHint(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		srv := provider.NewServer(p)
		defer srv.Close()
		p.Script(provider.Throttle(1500 * time.Millisecond))
		resp, body, err := httpCall{method: "POST", path: provider.PathSignatureRequests,
			authorization: "Bearer acme", key: "k1", body: contractJSON}.do(t, context.Background(), srv.HTTPClient())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(body, []byte(`"retry_after_ms":1500`)) {
			t.Fatalf("429 body = %s, want retry_after_ms 1500", body)
		}
		if got := resp.Header.Get("Retry-After"); got != "2" {
			t.Fatalf("Retry-After = %q, want 2", got)
		}
	})
}

func TestHTTPLostResponseNeverAnswers(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		srv := provider.NewServer(p)
		defer srv.Close()
		p.Script(provider.LoseResponse())

		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, _, err := httpCall{method: "POST", path: provider.PathSignatureRequests,
			authorization: "Bearer acme", key: "k1", body: contractJSON}.do(t, ctx, srv.HTTPClient())
		if err == nil {
			t.Fatalf("POST with a lost response = HTTP %d, want no answer before the client's deadline", resp.StatusCode)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("POST with a lost response = %v, want the client's deadline", err)
		}
		wantElapsed(t, "POST with a lost response", start, 5*time.Second)
		fakeclock.Wait()
		wantReceived(t, p, ann, 1)
		if st := p.Stats(acme); st.InFlight != 0 {
			t.Fatalf("Stats(acme).InFlight = %d after the client hung up, want 0 (the handler returned)", st.InFlight)
		}
	})
}

func TestClientErrorsMatchTheProvider(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		direct := newProvider(t, provider.Options{Accounts: []string{acme}})
		served := newProvider(t, provider.Options{Accounts: []string{acme}})
		srv := provider.NewServer(served)
		defer srv.Close()
		client := srv.Client()

		type call func(api provider.API) (any, error)
		send := func(account, key string, req provider.SendRequest) call {
			return func(api provider.API) (any, error) {
				return api.Send(context.Background(), account, key, req)
			}
		}
		status := func(key string) call {
			return func(api provider.API) (any, error) {
				return api.Status(context.Background(), acme, key)
			}
		}
		find := func(reference string) call {
			return func(api provider.API) (any, error) {
				return api.Find(context.Background(), acme, reference)
			}
		}
		withRef := contract
		withRef.Reference = "op-9"
		steps := []struct {
			name   string
			script []provider.Fault
			call   call
		}{
			{"new request", nil, send(acme, "k1", contract)},
			{"replay", nil, send(acme, "k1", contract)},
			{"lookup", nil, status("k1")},
			{"mismatch", nil, send(acme, "k1", nda)},
			{"not found", nil, status("k2")},
			{"invalid", nil, send(acme, "k2", provider.SendRequest{DocumentID: "d", Recipient: "nobody"})},
			{"no account", nil, send("", "k2", contract)},
			{"unknown account", nil, send(globex, "k2", contract)},
			{"unavailable", []provider.Fault{provider.FailBeforeCommit()}, send(acme, "k2", contract)},
			{"throttled", []provider.Fault{provider.Throttle(2500 * time.Millisecond)}, send(acme, "k2", contract)},
			{"gateway timeout", []provider.Fault{provider.LoseResponse()}, send(acme, "k2", contract)},
			{"status unavailable", []provider.Fault{provider.FailBeforeCommit()}, status("k1")},
			{"new request with a reference", nil, send(acme, "k9", withRef)},
			{"find", nil, find("op-9")},
			{"find none", nil, find("op-10")},
			{"find invalid", nil, find("")},
			{"find throttled", []provider.Fault{provider.Throttle(time.Second)}, find("op-9")},
		}
		sentinels := []error{
			provider.ErrInvalidRequest, provider.ErrUnauthorized, provider.ErrNotFound, provider.ErrInProgress,
			provider.ErrParameterMismatch, provider.ErrThrottled, provider.ErrUnavailable, provider.ErrTimeout,
			context.DeadlineExceeded, context.Canceled,
		}
		for _, s := range steps {
			direct.Script(s.script...)
			served.Script(s.script...)
			want, wantErr := s.call(direct)
			got, gotErr := s.call(client)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Client result = %#v, Provider result = %#v, want equal", s.name, got, want)
			}
			if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Errorf("%s: Client error = %v,\nProvider error = %v, want the same", s.name, gotErr, wantErr)
			}
			for _, target := range sentinels {
				if errors.Is(gotErr, target) != errors.Is(wantErr, target) {
					t.Errorf("%s: errors.Is(Client error, %v) = %v, want %v as for the Provider",
						s.name, target, errors.Is(gotErr, target), errors.Is(wantErr, target))
				}
			}
			gd, gok := provider.RetryAfter(gotErr)
			wd, wok := provider.RetryAfter(wantErr)
			if gd != wd || gok != wok {
				t.Errorf("%s: RetryAfter(Client error) = %v, %v, want %v, %v", s.name, gd, gok, wd, wok)
			}
		}
	})
}

func TestClientHandlesKeysThatNeedEscaping(t *testing.T) {
	keys := []string{"a/b", "a b", "100%", "q?x=1#frag", "clé-ü", "../k1", "a%2Fb"}
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		srv := provider.NewServer(p)
		defer srv.Close()
		client := srv.Client()
		for _, key := range keys {
			r := mustSend(t, client, acme, key, contract)
			if r.Key != key {
				t.Fatalf("Send(%q).Key = %q, want it unchanged", key, r.Key)
			}
			if got := mustStatus(t, client, acme, key); got != r {
				t.Fatalf("Status(%q) = %+v, want %+v", key, got, r)
			}
			if _, err := p.Status(context.Background(), acme, key); err != nil {
				t.Fatalf("Provider.Status(%q) = %v: the key reached the provider altered", key, err)
			}
		}
		wantReceived(t, p, ann, len(keys))
	})
}

func TestClientTreatsABrokenConnectionAsAmbiguous(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		srv := provider.NewServer(p)
		client := srv.Client()
		srv.Close()
		_, err := client.Send(context.Background(), acme, "k1", contract)
		wantErr(t, "Send(k1) to a closed server", err, provider.ErrTimeout)
		if !provider.Ambiguous(err) {
			t.Fatalf("Ambiguous(%v) = false, want true: the client cannot know whether the request got through", err)
		}
	})
}

func TestClientMapsBareHTTPErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		want    error
		wantDur time.Duration // retry-after, for throttles
	}{
		{"429 with Retry-After only", 429, map[string]string{"Retry-After": "3"}, "slow down", provider.ErrThrottled, 3 * time.Second},
		{"429 without a hint", 429, nil, "", provider.ErrThrottled, time.Second},
		{"502 from a gateway", 502, nil, "<html>bad gateway</html>", provider.ErrUnavailable, 0},
		{"500", 500, nil, "", provider.ErrUnavailable, 0},
		{"404 from a router", 404, nil, "404 page not found", provider.ErrNotFound, 0},
		{"418", 418, nil, "", provider.ErrInvalidRequest, 0},
		{"200 with garbage", 200, nil, "{", provider.ErrTimeout, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeclock.Run(t, func(t *testing.T) {
				l := provider.NewPipeListener()
				hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					for k, v := range tt.header {
						w.Header().Set(k, v)
					}
					w.WriteHeader(tt.status)
					io.WriteString(w, tt.body)
				})}
				served := make(chan struct{})
				go func() { defer close(served); hs.Serve(l) }()
				tr := &http.Transport{DialContext: l.Dial}
				defer func() {
					hs.Close()
					tr.CloseIdleConnections()
					<-served
				}()

				client := provider.NewClient("http://anything/", &http.Client{Transport: tr})
				_, err := client.Send(context.Background(), acme, "k1", contract)
				wantErr(t, "Send(k1)", err, tt.want)
				if tt.wantDur > 0 {
					if d, ok := provider.RetryAfter(err); !ok || d != tt.wantDur {
						t.Fatalf("RetryAfter(%v) = %v, %v, want %v", err, d, ok, tt.wantDur)
					}
				}
			})
		})
	}
}

func TestPipeListener(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		l := provider.NewPipeListener()
		if a := l.Addr(); a.Network() != "pipe" || a.String() != "pipe" {
			t.Fatalf("Addr() = %s/%s, want pipe/pipe", a.Network(), a.String())
		}

		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := l.Accept()
			if err != nil {
				t.Errorf("Accept() = %v, want a connection", err)
			}
			accepted <- c
		}()
		client, err := l.Dial(context.Background(), "tcp", "ignored:80")
		if err != nil {
			t.Fatalf("Dial() = %v, want a connection", err)
		}
		server := <-accepted
		go func() { client.Write([]byte("ping")); client.Close() }()
		got, _ := io.ReadAll(server)
		server.Close()
		if string(got) != "ping" {
			t.Fatalf("server read %q, want ping", got)
		}

		// Dial gives up with its context when nobody accepts.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := l.Dial(ctx, "pipe", ""); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Dial() with nobody accepting = %v, want the context's deadline", err)
		}

		if err := l.Close(); err != nil {
			t.Fatalf("Close() = %v", err)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("second Close() = %v, want nil (idempotent)", err)
		}
		if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept() after Close = %v, want net.ErrClosed", err)
		}
		if _, err := l.Dial(context.Background(), "pipe", ""); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Dial() after Close = %v, want net.ErrClosed", err)
		}
	})
}

func TestHandlerServesAnyAPI(t *testing.T) {
	// A Handler in front of a Client in front of a Provider: the proxy
	// passes every answer through unchanged.
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		inner := provider.NewServer(p)
		defer inner.Close()
		outer := provider.NewServer(inner.Client())
		defer outer.Close()
		api := outer.Client()

		first := mustSend(t, api, acme, "k1", contract)
		if again := mustSend(t, api, acme, "k1", contract); withoutReplayed(again) != first || !again.Replayed {
			t.Fatalf("Send(k1) through a proxy = %+v, want a replay of %+v", again, first)
		}
		_, err := api.Send(context.Background(), acme, "k1", nda)
		wantErr(t, "Send(k1) through a proxy", err, provider.ErrParameterMismatch)
		wantReceived(t, p, ann, 1)
	})
}

func TestNewClientDefaults(t *testing.T) {
	c := provider.NewClient("http://provider.test/", nil)
	// An invalid key is refused locally, without a round trip.
	_, err := c.Send(context.Background(), acme, "k\n1", contract)
	wantErr(t, "Send(k\\n1)", err, provider.ErrInvalidRequest)
	_, err = c.Status(context.Background(), "ac\nme", "k1")
	wantErr(t, "Status(k1) for a malformed account", err, provider.ErrUnauthorized)
	if got := fmt.Sprint(err); !strings.HasPrefix(got, `status "k1": `) {
		t.Fatalf("error = %q, want it to start with the operation and key", got)
	}
}

func TestClientHTTPTimeoutIsAmbiguous(t *testing.T) {
	fakeclock.Run(t, func(t *testing.T) {
		p := newProvider(t, provider.Options{})
		srv := provider.NewServer(p)
		defer srv.Close()
		hc := srv.HTTPClient()
		hc.Timeout = 2 * time.Second
		client := provider.NewClient(srv.URL, hc)

		p.Script(provider.LoseResponse())
		start := time.Now()
		_, err := client.Send(context.Background(), acme, "k1", contract)
		wantElapsed(t, "Send(k1) with http.Client.Timeout 2s", start, 2*time.Second)
		wantErr(t, "Send(k1) with http.Client.Timeout 2s", err, provider.ErrTimeout)
		wantErr(t, "Send(k1) with http.Client.Timeout 2s", err, context.DeadlineExceeded)
		if !provider.Retryable(err) {
			t.Fatalf("Retryable(%v) = false, want true", err)
		}
		fakeclock.Wait()
		wantReceived(t, p, ann, 1)
	})
}
