package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The HTTP surface. Handler serves it and Client calls it:
//
//	POST /v1/signature_requests                  Send; JSON SendRequest body,
//	                                             Idempotency-Key header
//	GET  /v1/signature_requests/{key}            Status; key path-escaped
//	GET  /v1/signature_requests?reference={ref}  Find
//
// All authenticate with "Authorization: Bearer <account>". Success is 201
// Created with a JSON Receipt for a new request, 200 OK for a replay (with
// "Idempotent-Replayed: true") and for a lookup; Find answers 200 OK with
// {"data": [Receipt...]}. Errors carry a JSON body
// {"error": {"code", "message", "retry_after_ms"}} and these statuses:
//
//	400 invalid_request      ErrInvalidRequest
//	401 unauthorized         ErrUnauthorized
//	404 not_found            ErrNotFound
//	409 in_progress          ErrInProgress
//	422 parameter_mismatch   ErrParameterMismatch
//	429 throttled            *ThrottledError, with a Retry-After header
//	                         (whole seconds, rounded up) and the exact
//	                         hint in retry_after_ms
//	503 unavailable          ErrUnavailable
//	504 timeout              ErrTimeout (the provider-side response timeout)
//
// A lost response is a handler that commits and then does not answer until
// the client gives up (or the provider-side response timeout passes).
const (
	// PathSignatureRequests is the collection path.
	PathSignatureRequests = "/v1/signature_requests"

	// HeaderIdempotencyKey carries the key of a Send.
	HeaderIdempotencyKey = "Idempotency-Key"

	// HeaderReplayed is set to "true" on a replayed Send's response.
	HeaderReplayed = "Idempotent-Replayed"
)

// maxBody bounds request and response bodies.
const maxBody = 1 << 20

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error struct {
		Code         string `json:"code"`
		Message      string `json:"message"`
		RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
	} `json:"error"`
}

// findBody is the JSON shape of a Find response.
type findBody struct {
	Data []Receipt `json:"data"`
}

// errorCodes maps each sentinel to its HTTP status and code, in the order
// they are tested.
var errorCodes = []struct {
	err    error
	status int
	code   string
}{
	{ErrInvalidRequest, http.StatusBadRequest, "invalid_request"},
	{ErrUnauthorized, http.StatusUnauthorized, "unauthorized"},
	{ErrNotFound, http.StatusNotFound, "not_found"},
	{ErrInProgress, http.StatusConflict, "in_progress"},
	{ErrParameterMismatch, http.StatusUnprocessableEntity, "parameter_mismatch"},
	{ErrThrottled, http.StatusTooManyRequests, "throttled"},
	{ErrUnavailable, http.StatusServiceUnavailable, "unavailable"},
	{ErrTimeout, http.StatusGatewayTimeout, "timeout"},
}

// Handler serves api (normally a *Provider) over HTTP as described above. It
// starts no goroutines of its own; the lost-response fault holds the handler
// until the request's context ends, which happens when the client gives up
// and closes the connection.
func Handler(api API) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathSignatureRequests, func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(HeaderIdempotencyKey)
		// Read the whole body: reaching EOF is what lets net/http notice a
		// client that hangs up while the handler is still working.
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		var req SendRequest
		if err == nil {
			err = json.Unmarshal(data, &req)
		}
		if err != nil {
			writeError(w, fmt.Errorf("send %q: %w: body is not a JSON signing request: %v", key, ErrInvalidRequest, err))
			return
		}
		receipt, err := api.Send(r.Context(), bearer(r), key, req)
		if err != nil {
			writeError(w, err)
			return
		}
		status := http.StatusCreated
		if receipt.Replayed {
			status = http.StatusOK
			w.Header().Set(HeaderReplayed, "true")
		}
		writeJSON(w, status, receipt)
	})
	mux.HandleFunc("GET "+PathSignatureRequests, func(w http.ResponseWriter, r *http.Request) {
		found, err := api.Find(r.Context(), bearer(r), r.URL.Query().Get("reference"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, findBody{Data: found})
	})
	mux.HandleFunc("GET "+PathSignatureRequests+"/{key...}", func(w http.ResponseWriter, r *http.Request) {
		receipt, err := api.Status(r.Context(), bearer(r), r.PathValue("key"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, receipt)
	})
	return mux
}

// bearer returns the account named by an "Authorization: Bearer" header, or
// "" (which the provider rejects as unauthorized).
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return token
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

func writeError(w http.ResponseWriter, err error) {
	status, code := http.StatusInternalServerError, "internal"
	for _, c := range errorCodes {
		if errors.Is(err, c.err) {
			status, code = c.status, c.code
			break
		}
	}
	var body errorBody
	body.Error.Code = code
	body.Error.Message = err.Error()
	switch status {
	case http.StatusTooManyRequests:
		d, _ := RetryAfter(err)
		body.Error.RetryAfterMS = d.Milliseconds()
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(d.Seconds())), 10))
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	writeJSON(w, status, body)
}

// Client calls a provider served by Handler. Its Send and Status return the
// same receipts and the same error values (and messages) as the Provider's
// own methods, plus ErrTimeout for a call that got no usable answer (a
// deadline, a cancellation, a broken connection). It is safe for concurrent
// use.
type Client struct {
	baseURL string
	hc      *http.Client
}

// NewClient returns a Client for the provider at baseURL (for example
// "http://provider.test"), using hc, or http.DefaultClient when hc is nil.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), hc: hc}
}

// Send posts req under account and key. See Provider.Send for the outcomes.
func (c *Client) Send(ctx context.Context, account, key string, req SendRequest) (Receipt, error) {
	if err := localCheck(OpSend, account, key); err != nil {
		return Receipt{}, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Receipt{}, fmt.Errorf("send %q: %w: %v", key, ErrInvalidRequest, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+PathSignatureRequests, bytes.NewReader(body))
	if err != nil {
		return Receipt{}, fmt.Errorf("send %q: %w: %v", key, ErrInvalidRequest, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set(HeaderIdempotencyKey, key)
	return c.do(hreq, OpSend, account, key)
}

// Status gets the receipt committed under account and key. See
// Provider.Status for the outcomes.
func (c *Client) Status(ctx context.Context, account, key string) (Receipt, error) {
	if err := localCheck(OpStatus, account, key); err != nil {
		return Receipt{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, c.baseURL+PathSignatureRequests+"/"+url.PathEscape(key), nil)
	if err != nil {
		return Receipt{}, fmt.Errorf("status %q: %w: %v", key, ErrInvalidRequest, err)
	}
	return c.do(hreq, OpStatus, account, key)
}

// Find lists the signing requests committed with reference. See
// Provider.Find.
func (c *Client) Find(ctx context.Context, account, reference string) ([]Receipt, error) {
	if err := localCheck(OpFind, account, ""); err != nil {
		return nil, err
	}
	u := c.baseURL + PathSignatureRequests + "?" + url.Values{"reference": {reference}}.Encode()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("find %q: %w: %v", reference, ErrInvalidRequest, err)
	}
	data, err := c.roundTrip(hreq, OpFind, account, reference)
	if err != nil {
		return nil, err
	}
	var body findBody
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, fmt.Errorf("find %q: %w: unreadable response: %v", reference, ErrTimeout, err)
	}
	if body.Data == nil {
		body.Data = []Receipt{}
	}
	return body.Data, nil
}

// localCheck rejects, without a round trip, an account or key that cannot be
// sent in a header, with the error the provider would give.
func localCheck(op Op, account, key string) error {
	if account != "" && !headerSafe(account) {
		return fmt.Errorf("%s %q: %w: malformed account", op.verb(), key, ErrUnauthorized)
	}
	if account != "" && !headerSafe(key) {
		return fmt.Errorf("%s %q: %w: idempotency key with control characters or surrounding spaces", op.verb(), key, ErrInvalidRequest)
	}
	return nil
}

// do makes a round trip that answers with one Receipt.
func (c *Client) do(hreq *http.Request, op Op, account, key string) (Receipt, error) {
	data, err := c.roundTrip(hreq, op, account, key)
	if err != nil {
		return Receipt{}, err
	}
	var r Receipt
	if err := json.Unmarshal(data, &r); err != nil {
		return Receipt{}, fmt.Errorf("%s %q: %w: unreadable response: %v", op.verb(), key, ErrTimeout, err)
	}
	return r, nil
}

// roundTrip sends hreq with the account's credentials and returns the body of
// a successful response, or the provider's error.
func (c *Client) roundTrip(hreq *http.Request, op Op, account, key string) ([]byte, error) {
	if account != "" {
		hreq.Header.Set("Authorization", "Bearer "+account)
	}
	ctx := hreq.Context()
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, noAnswer(ctx, op, key, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err == nil {
		// An answer that races with the caller's own cancellation is
		// treated as not received, as Provider does: a caller that gave up
		// (or crashed) does not get to see it.
		err = ctx.Err()
	}
	if err != nil {
		return nil, noAnswer(ctx, op, key, err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return nil, remoteErr(op, key, resp, data)
	}
	return data, nil
}

// noAnswer is the error of a round trip that produced no usable response.
// The request may or may not have been committed.
func noAnswer(ctx context.Context, op Op, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return timeoutError(op, key, cerr)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%s %q: %w (%w): %v", op.verb(), key, ErrTimeout, context.DeadlineExceeded, err)
	}
	return fmt.Errorf("%s %q: %w: %w", op.verb(), key, ErrTimeout, err)
}

// remoteError is an error answered by the server: its message is the
// provider's own, and it unwraps to the sentinel (and, for a timeout, to
// context.DeadlineExceeded as the in-process error does).
type remoteError struct {
	msg  string
	errs []error
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return e.errs }

// remoteErr turns an error response back into the provider's error value.
func remoteErr(op Op, key string, resp *http.Response, data []byte) error {
	var body errorBody
	_ = json.Unmarshal(data, &body)
	var sentinel error
	for _, c := range errorCodes {
		if body.Error.Code == c.code {
			sentinel = c.err
			break
		}
	}
	if sentinel == nil {
		for _, c := range errorCodes {
			if resp.StatusCode == c.status {
				sentinel = c.err
				break
			}
		}
	}
	if sentinel == nil {
		switch {
		case resp.StatusCode >= 500:
			sentinel = ErrUnavailable
		default:
			sentinel = ErrInvalidRequest
		}
	}
	msg := body.Error.Message
	if msg == "" {
		msg = fmt.Sprintf("%s %q: %v (HTTP %d)", op.verb(), key, sentinel, resp.StatusCode)
	}
	errs := []error{sentinel}
	switch sentinel {
	case ErrThrottled:
		d := time.Duration(body.Error.RetryAfterMS) * time.Millisecond
		if d <= 0 {
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
				d = time.Duration(secs) * time.Second
			}
		}
		if d <= 0 {
			d = time.Second
		}
		errs = []error{&ThrottledError{RetryAfter: d}}
	case ErrTimeout:
		errs = append(errs, context.DeadlineExceeded)
	}
	return &remoteError{msg: msg, errs: errs}
}
