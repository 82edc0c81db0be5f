// Package provider is a fake third-party document-signing API for the lab
// suites. It behaves like a real provider with Stripe-style idempotency keys,
// and it can be told to misbehave in the ways that make distributed work hard:
// above all, to commit a request and then lose the response, so that the
// caller faces the "fourth outcome" (it does not know whether the customer
// got the signing request).
//
// A Provider is an in-process API (Send, Status, Find) plus test-side
// inspection (Received, Deliveries, Stats, Log). Handler serves the same API as JSON over
// HTTP and Client calls it; both *Provider and *Client satisfy API, so a
// worker is written once against API. NewServer wires a Handler and a Client
// together over an in-memory PipeListener, which also works inside a
// testing/synctest bubble.
//
// Time is read only from the time package (time.Now, timers, context
// deadlines), so inside a fakeclock bubble the retention window, latencies
// and lost responses all run on virtual time. A Provider starts no goroutine:
// every goroutine it blocks is the caller's own, and it returns when its call
// does. Create the Provider inside the bubble that uses it.
package provider

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Defaults and limits.
const (
	// DefaultRetention is how long the provider remembers a committed key
	// when Options.Retention is zero.
	DefaultRetention = 24 * time.Hour

	// DefaultResponseTimeout is how long a lost response holds a caller
	// whose context has no deadline, when Options.ResponseTimeout is zero.
	DefaultResponseTimeout = 30 * time.Second

	// MaxKeyLen is the longest idempotency key the provider accepts.
	MaxKeyLen = 255
)

// API is what a worker calls. Both *Provider (in process) and *Client (over
// HTTP) implement it, with the same results and the same error values.
type API interface {
	// Send asks for document req.DocumentID to be sent to req.Recipient
	// for signature, under an idempotency key scoped to account.
	Send(ctx context.Context, account, key string, req SendRequest) (Receipt, error)

	// Status looks up the signing request committed under account and key.
	Status(ctx context.Context, account, key string) (Receipt, error)

	// Find lists the signing requests account committed with a
	// SendRequest.Reference; it does not expire with the keys.
	Find(ctx context.Context, account, reference string) ([]Receipt, error)
}

var (
	_ API = (*Provider)(nil)
	_ API = (*Client)(nil)
)

// SendRequest is the body of a Send: which document goes to whom. Two Sends
// with the same account and key must carry equal SendRequests, or the second
// gets ErrParameterMismatch.
type SendRequest struct {
	DocumentID string `json:"document_id"`       // required
	Recipient  string `json:"recipient"`         // required, an email address
	Subject    string `json:"subject,omitempty"` // optional

	// Reference is the caller's own id for the operation (typically the
	// operation id that is also the idempotency key), stored with the
	// signing request and searchable with Find for as long as the provider
	// lives. Optional; when set, it obeys the rules of a key.
	Reference string `json:"reference,omitempty"`
}

// RequestStatus is the state of a committed signing request.
type RequestStatus string

// StatusSent is the status of a signing request that was committed and
// delivered to its recipient. It is the only status the fake produces.
const StatusSent RequestStatus = "sent"

// Receipt is the provider's answer about one signing request.
type Receipt struct {
	// RequestID is the provider's own id for the signing request
	// ("sr_000001"). A replayed Send returns the original id.
	RequestID  string        `json:"id"`
	Key        string        `json:"idempotency_key"`
	DocumentID string        `json:"document_id"`
	Recipient  string        `json:"recipient"`
	Reference  string        `json:"reference,omitempty"`
	Status     RequestStatus `json:"status"`

	// CreatedAt is when the request was committed, in UTC without a
	// monotonic reading, so receipts compare equal with == after a JSON
	// round trip.
	CreatedAt time.Time `json:"created_at"`

	// Replayed is true when Send returned a stored result instead of
	// creating a request (the Idempotent-Replayed: true of real APIs). It
	// is the only field in which a replay differs from the original
	// receipt.
	Replayed bool `json:"replayed,omitempty"`
}

// Delivery is one signing request that actually reached its recipient: what
// a customer would see in their inbox.
type Delivery struct {
	RequestID  string
	Account    string
	Key        string
	DocumentID string
	Recipient  string
	Subject    string
	Reference  string
	At         time.Time // commit time
}

// receipt is the Receipt of the delivery's signing request.
func (d Delivery) receipt() Receipt {
	return Receipt{
		RequestID:  d.RequestID,
		Key:        d.Key,
		DocumentID: d.DocumentID,
		Recipient:  d.Recipient,
		Reference:  d.Reference,
		Status:     StatusSent,
		CreatedAt:  d.At.UTC().Round(0),
	}
}

// Options configure a Provider. The zero value is usable.
type Options struct {
	// Retention is how long a committed key is remembered, measured from
	// its commit. A Send with the same key is deduplicated while
	// now - commit < Retention and creates a new request (a second
	// delivery) from then on; Status answers ErrNotFound from then on.
	// Zero means DefaultRetention.
	Retention time.Duration

	// ResponseTimeout is how long a lost response holds a caller whose
	// context has no deadline before it gets ErrTimeout (a gateway
	// timeout). Zero means DefaultResponseTimeout.
	ResponseTimeout time.Duration

	// Accounts, when not empty, lists the only accounts (API tokens) the
	// provider accepts; calls from others get ErrUnauthorized. When empty,
	// any non-empty account is accepted.
	Accounts []string
}

// Stats counts what the provider saw from one account.
type Stats struct {
	Sends         int // Send calls that passed validation
	Statuses      int // Status calls that passed validation
	Finds         int // Find calls that passed validation
	Committed     int // new signing requests created (deliveries)
	Replayed      int // Sends answered with a stored result
	InProgress    int // calls answered ErrInProgress
	Mismatched    int // Sends answered ErrParameterMismatch
	Rejected      int // calls answered ErrInvalidRequest or ErrUnauthorized
	Unavailable   int // calls failed before commit (fault or outage)
	Throttled     int // calls throttled (fault or slowdown cap)
	LostResponses int // calls processed whose answer was withheld
	Abandoned     int // new Sends dropped before commit because the caller gave up

	// InFlight is the number of the account's Send calls inside the
	// provider right now, and MaxInFlight the highest it has been (since
	// ResetMaxInFlight). Every Send that passed validation counts from
	// arrival until it returns, including those then refused by a slowdown
	// cap and those whose response is lost, so MaxInFlight measures the
	// caller's own concurrency.
	InFlight    int
	MaxInFlight int
}

// Provider is the fake signing API. It is safe for concurrent use. Create it
// with New, inside the synctest bubble (if any) that uses it.
type Provider struct {
	retention       time.Duration
	responseTimeout time.Duration
	accounts        map[string]bool // nil: any non-empty account
	start           time.Time

	mu         sync.Mutex
	records    map[recordKey]*record
	deliveries []Delivery
	nextID     int
	script     []Fault
	chaos      *chaosSource
	outages    []outage
	slowdown   Slowdown
	stats      map[string]*Stats
	events     []Event
	onCommit   func(Delivery)
	onEvent    func(Event)
}

// recordKey scopes a key to its account. A struct, not a joined string, so
// ("ab", "c") and ("a", "bc") never collide.
type recordKey struct{ account, key string }

// record is what the provider remembers about a key: claimed (in flight)
// until committed is set.
type record struct {
	req         SendRequest
	committed   bool
	committedAt time.Time
	receipt     Receipt
}

// New returns a Provider with no faults configured.
func New(opts Options) *Provider {
	p := &Provider{
		retention:       opts.Retention,
		responseTimeout: opts.ResponseTimeout,
		start:           time.Now(),
		records:         make(map[recordKey]*record),
		stats:           make(map[string]*Stats),
	}
	if p.retention <= 0 {
		p.retention = DefaultRetention
	}
	if p.responseTimeout <= 0 {
		p.responseTimeout = DefaultResponseTimeout
	}
	if len(opts.Accounts) > 0 {
		p.accounts = make(map[string]bool, len(opts.Accounts))
		for _, a := range opts.Accounts {
			p.accounts[a] = true
		}
	}
	return p
}

// Retention returns the key retention window in effect.
func (p *Provider) Retention() time.Duration { return p.retention }

// Send creates a signing request for req under account and key, or answers
// with what an earlier Send with the same account and key produced. In order:
//
//   - A context already done: ErrTimeout, nothing processed.
//   - An empty, malformed or unknown account: ErrUnauthorized. An empty,
//     too long or malformed key (or Reference), an empty document id or a
//     recipient that is not an email address: ErrInvalidRequest. Validation
//     comes first, so it holds even during an outage.
//   - Inside an outage window: ErrUnavailable.
//   - In a slowdown, when more than Slowdown.Limit Sends of the account
//     would be in flight: a *ThrottledError.
//   - The next matching scripted fault, or else a chaos draw, applies (see
//     FaultKind).
//   - The key is known, unexpired, with different parameters:
//     ErrParameterMismatch. Known and still in flight: ErrInProgress. Known
//     and committed: the original receipt, Replayed set, no new delivery.
//   - Otherwise the key is claimed, the call waits out any latency, and the
//     request is committed: one Delivery to the recipient, then the OnCommit
//     hook, then the receipt (unless the response is lost).
//
// If the caller's context ends before an answer is given, Send returns an
// error wrapping ErrTimeout and the context's error; a new request abandoned
// before its commit is forgotten (nothing delivered), one abandoned after it
// stays committed.
func (p *Provider) Send(ctx context.Context, account, key string, req SendRequest) (Receipt, error) {
	if err := ctx.Err(); err != nil {
		p.emit(OpSend, account, key, FaultNone, "not processed: the caller's context was already done")
		return Receipt{}, timeoutError(OpSend, key, err)
	}
	if err := p.admit(OpSend, account, key, &req); err != nil {
		return Receipt{}, err
	}

	p.mu.Lock()
	st := p.statsLocked(account)
	st.Sends++
	st.InFlight++
	st.MaxInFlight = max(st.MaxInFlight, st.InFlight)
	defer func() {
		p.mu.Lock()
		st.InFlight--
		p.mu.Unlock()
	}()

	now := time.Now()
	if o, ok := p.outageLocked(now); ok {
		st.Unavailable++
		p.unlockNotify(p.logLocked(OpSend, account, key, FaultNone, "failed before commit: outage"))
		return Receipt{}, fmt.Errorf("send %q: %w: outage until t=%v", key, ErrUnavailable, o.to.Sub(p.start))
	}
	sd := p.slowdown
	if inFlight := st.InFlight; sd.Limit > 0 && inFlight > sd.Limit {
		st.Throttled++
		p.unlockNotify(p.logLocked(OpSend, account, key, FaultNone,
			fmt.Sprintf("throttled: slowdown, %d Sends in flight, limit %d", inFlight, sd.Limit)))
		return Receipt{}, fmt.Errorf("send %q: %d concurrent sends over the limit of %d: %w",
			key, inFlight, sd.Limit, &ThrottledError{RetryAfter: sd.retryAfter()})
	}

	f := p.faultLocked(OpSend, account, key)
	latency := f.Latency + sd.Latency
	switch f.Kind {
	case FaultFailBeforeCommit:
		st.Unavailable++
		p.unlockNotify(p.logLocked(OpSend, account, key, f.Kind, "failed before commit"))
		return Receipt{}, p.answerAfter(ctx, OpSend, key, latency,
			fmt.Errorf("send %q: %w: injected failure before commit", key, ErrUnavailable))
	case FaultThrottle:
		st.Throttled++
		p.unlockNotify(p.logLocked(OpSend, account, key, f.Kind, "throttled"))
		return Receipt{}, p.answerAfter(ctx, OpSend, key, latency,
			fmt.Errorf("send %q: %w", key, &ThrottledError{RetryAfter: f.retryAfter()}))
	}

	rk := recordKey{account, key}
	rec := p.lookupLocked(rk, now)
	switch {
	case rec != nil && rec.req != req:
		st.Mismatched++
		p.unlockNotify(p.logLocked(OpSend, account, key, f.Kind, "parameter mismatch"))
		return Receipt{}, p.answerAfter(ctx, OpSend, key, latency,
			fmt.Errorf("send %q: %w: %s", key, ErrParameterMismatch, describeMismatch(rec.req, req)))
	case rec != nil && !rec.committed:
		st.InProgress++
		p.unlockNotify(p.logLocked(OpSend, account, key, f.Kind, "in progress: the first request with this key is still being processed"))
		return Receipt{}, p.answerAfter(ctx, OpSend, key, latency,
			fmt.Errorf("send %q: %w", key, ErrInProgress))
	case rec != nil:
		st.Replayed++
		out := "replayed " + rec.receipt.RequestID + " (no new delivery)"
		if f.Kind == FaultLoseResponse {
			st.LostResponses++
			out += ", response lost"
		}
		receipt := rec.receipt
		receipt.Replayed = true
		p.unlockNotify(p.logLocked(OpSend, account, key, f.Kind, out))
		if err := p.answerAfter(ctx, OpSend, key, latency, nil); err != nil {
			return Receipt{}, err
		}
		return respond(p, ctx, OpSend, account, key, f, receipt)
	}

	// A new request: claim the key, do the work, commit.
	rec = &record{req: req}
	p.records[rk] = rec
	var claimEvent []Event
	if latency > 0 {
		claimEvent = append(claimEvent, p.logLocked(OpSend, account, key, f.Kind,
			fmt.Sprintf("in flight for %v before commit", latency)))
	}
	p.unlockNotify(claimEvent...)

	if err := sleep(ctx, latency); err != nil {
		p.mu.Lock()
		if p.records[rk] == rec {
			delete(p.records, rk)
		}
		st.Abandoned++
		p.unlockNotify(p.logLocked(OpSend, account, key, f.Kind, "abandoned before commit: the caller gave up; nothing delivered"))
		return Receipt{}, timeoutError(OpSend, key, err)
	}

	p.mu.Lock()
	committedAt := time.Now()
	p.nextID++
	d := Delivery{
		RequestID:  fmt.Sprintf("sr_%06d", p.nextID),
		Account:    account,
		Key:        key,
		DocumentID: req.DocumentID,
		Recipient:  req.Recipient,
		Subject:    req.Subject,
		Reference:  req.Reference,
		At:         committedAt,
	}
	receipt := d.receipt()
	rec.committed, rec.committedAt, rec.receipt = true, committedAt, receipt
	p.deliveries = append(p.deliveries, d)
	st.Committed++
	out := fmt.Sprintf("committed %s (document %s to %s)", receipt.RequestID, req.DocumentID, req.Recipient)
	if f.Kind == FaultLoseResponse {
		st.LostResponses++
		out += ", response lost"
	}
	onCommit := p.onCommit
	p.unlockNotify(p.logLocked(OpSend, account, key, f.Kind, out))
	if onCommit != nil {
		onCommit(d)
	}
	return respond(p, ctx, OpSend, account, key, f, receipt)
}

// Status returns the receipt of the signing request committed under account
// and key. It answers ErrNotFound when the provider does not know the key
// (never committed, abandoned before commit, or forgotten after the
// retention window) and ErrInProgress while a Send with the key is still
// being processed. Validation, outages and faults apply as for Send (a
// slowdown does not); a lost Status response just costs the caller its
// deadline. The lookup is made at the end of any latency.
//
// Status answers about the idempotency key, and forgets it with the key. To
// reconcile an operation whose key may have expired, use Find.
func (p *Provider) Status(ctx context.Context, account, key string) (Receipt, error) {
	f, st, err := p.beginRead(ctx, OpStatus, account, key)
	if err != nil {
		return Receipt{}, err
	}

	p.mu.Lock()
	lost := ""
	if f.Kind == FaultLoseResponse {
		st.LostResponses++
		lost = ", response lost"
	}
	rec := p.lookupLocked(recordKey{account, key}, time.Now())
	switch {
	case rec == nil:
		p.unlockNotify(p.logLocked(OpStatus, account, key, f.Kind, "not found"+lost))
		if f.Kind == FaultLoseResponse {
			return respond(p, ctx, OpStatus, account, key, f, Receipt{})
		}
		return Receipt{}, fmt.Errorf("status %q: %w", key, ErrNotFound)
	case !rec.committed:
		st.InProgress++
		p.unlockNotify(p.logLocked(OpStatus, account, key, f.Kind, "in progress"+lost))
		if f.Kind == FaultLoseResponse {
			return respond(p, ctx, OpStatus, account, key, f, Receipt{})
		}
		return Receipt{}, fmt.Errorf("status %q: %w", key, ErrInProgress)
	}
	receipt := rec.receipt
	p.unlockNotify(p.logLocked(OpStatus, account, key, f.Kind, "found "+receipt.RequestID+lost))
	return respond(p, ctx, OpStatus, account, key, f, receipt)
}

// Find returns every signing request the account committed with
// SendRequest.Reference equal to reference, in commit order, and an empty
// (non-nil) slice when there is none. Unlike Status it never forgets: signing
// requests outlive their idempotency keys, so Find is how a worker reconciles
// an operation whose key may be past the retention window (search by the
// operation id it stored as the reference before resubmitting). More than
// one result means the operation was sent more than once. An empty reference
// is ErrInvalidRequest; validation, outages and faults apply as for Status
// (a fault's Key filter matches the reference).
func (p *Provider) Find(ctx context.Context, account, reference string) ([]Receipt, error) {
	f, st, err := p.beginRead(ctx, OpFind, account, reference)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	found := []Receipt{}
	var ids []string
	for _, d := range p.deliveries {
		if d.Account == account && d.Reference == reference {
			found = append(found, d.receipt())
			ids = append(ids, d.RequestID)
		}
	}
	out := "found none"
	if len(ids) > 0 {
		out = fmt.Sprintf("found %d: %s", len(ids), strings.Join(ids, ", "))
	}
	if f.Kind == FaultLoseResponse {
		st.LostResponses++
		out += ", response lost"
	}
	p.unlockNotify(p.logLocked(OpFind, account, reference, f.Kind, out))
	return respond(p, ctx, OpFind, account, reference, f, found)
}

// beginRead runs the front of a read-only call (Status, Find): the context
// check, validation, counting, an outage, the call's fault and its latency.
// It returns the fault and the account's stats when the call should go on to
// its lookup, and the call's error otherwise.
func (p *Provider) beginRead(ctx context.Context, op Op, account, key string) (Fault, *Stats, error) {
	if err := ctx.Err(); err != nil {
		p.emit(op, account, key, FaultNone, "not processed: the caller's context was already done")
		return Fault{}, nil, timeoutError(op, key, err)
	}
	if err := p.admit(op, account, key, nil); err != nil {
		return Fault{}, nil, err
	}

	p.mu.Lock()
	st := p.statsLocked(account)
	if op == OpFind {
		st.Finds++
	} else {
		st.Statuses++
	}
	if o, ok := p.outageLocked(time.Now()); ok {
		st.Unavailable++
		p.unlockNotify(p.logLocked(op, account, key, FaultNone, "failed: outage"))
		return Fault{}, nil, fmt.Errorf("%s %q: %w: outage until t=%v", op.verb(), key, ErrUnavailable, o.to.Sub(p.start))
	}
	f := p.faultLocked(op, account, key)
	switch f.Kind {
	case FaultFailBeforeCommit:
		st.Unavailable++
		p.unlockNotify(p.logLocked(op, account, key, f.Kind, "failed"))
		return Fault{}, nil, p.answerAfter(ctx, op, key, f.Latency,
			fmt.Errorf("%s %q: %w: injected failure", op.verb(), key, ErrUnavailable))
	case FaultThrottle:
		st.Throttled++
		p.unlockNotify(p.logLocked(op, account, key, f.Kind, "throttled"))
		return Fault{}, nil, p.answerAfter(ctx, op, key, f.Latency,
			fmt.Errorf("%s %q: %w", op.verb(), key, &ThrottledError{RetryAfter: f.retryAfter()}))
	}
	p.mu.Unlock()

	if err := sleep(ctx, f.Latency); err != nil {
		p.emit(op, account, key, f.Kind, "caller gave up before the answer")
		return Fault{}, nil, timeoutError(op, key, err)
	}
	return f, st, nil
}

// respond delivers a call's successful answer v, unless the fault loses it
// or the caller has gone in the meantime (for example, cancelled from an
// OnCommit hook to simulate a crash after the commit).
func respond[T any](p *Provider, ctx context.Context, op Op, account, key string, f Fault, v T) (T, error) {
	var zero T
	if f.Kind == FaultLoseResponse {
		return zero, timeoutError(op, key, p.waitLost(ctx))
	}
	if err := ctx.Err(); err != nil {
		p.emit(op, account, key, f.Kind, "answer not delivered: the caller's context ended")
		return zero, timeoutError(op, key, err)
	}
	return v, nil
}

// answerAfter returns err after latency, or a timeout if the caller's
// context ends first.
func (p *Provider) answerAfter(ctx context.Context, op Op, key string, latency time.Duration, err error) error {
	if cerr := sleep(ctx, latency); cerr != nil {
		return timeoutError(op, key, cerr)
	}
	return err
}

// waitLost blocks a caller whose response was lost: until its context is
// done when it has a deadline, and otherwise until the provider-side response
// timeout (or a cancellation). It returns the cause for the timeout error.
func (p *Provider) waitLost(ctx context.Context) error {
	if _, ok := ctx.Deadline(); ok {
		<-ctx.Done()
		return ctx.Err()
	}
	t := time.NewTimer(p.responseTimeout)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return context.DeadlineExceeded
	}
}

// sleep waits for d on the time package's clock, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// admit authenticates and validates a call, logging and counting a rejection.
// req is nil for Status and Find; for Find, key is the reference.
func (p *Provider) admit(op Op, account, key string, req *SendRequest) error {
	keyName := "idempotency key"
	if op == OpFind {
		keyName = "reference"
	}
	var sentinel error
	var reason string
	switch {
	case account == "":
		sentinel, reason = ErrUnauthorized, "no account"
	case !headerSafe(account):
		sentinel, reason = ErrUnauthorized, "malformed account"
	case p.accounts != nil && !p.accounts[account]:
		sentinel, reason = ErrUnauthorized, fmt.Sprintf("unknown account %q", account)
	case key == "":
		sentinel, reason = ErrInvalidRequest, "empty "+keyName
	case len(key) > MaxKeyLen:
		sentinel, reason = ErrInvalidRequest, fmt.Sprintf("%s longer than %d bytes", keyName, MaxKeyLen)
	case !headerSafe(key):
		sentinel, reason = ErrInvalidRequest, keyName+" with control characters or surrounding spaces"
	case req != nil && (len(req.Reference) > MaxKeyLen || !headerSafe(req.Reference)):
		sentinel, reason = ErrInvalidRequest, "reference too long, or with control characters or surrounding spaces"
	case req != nil && strings.TrimSpace(req.DocumentID) == "":
		sentinel, reason = ErrInvalidRequest, "empty document id"
	case req != nil && !validEmail(req.Recipient):
		sentinel, reason = ErrInvalidRequest, fmt.Sprintf("recipient %q is not an email address", req.Recipient)
	default:
		return nil
	}
	p.mu.Lock()
	p.statsLocked(account).Rejected++
	p.unlockNotify(p.logLocked(op, account, key, FaultNone, "rejected: "+reason))
	return fmt.Errorf("%s %q: %w: %s", op.verb(), key, sentinel, reason)
}

// describeMismatch names the fields in which req differs from the request
// the key was first used for.
func describeMismatch(first, req SendRequest) string {
	var diffs []string
	for _, f := range []struct{ name, was, now string }{
		{"document_id", first.DocumentID, req.DocumentID},
		{"recipient", first.Recipient, req.Recipient},
		{"subject", first.Subject, req.Subject},
		{"reference", first.Reference, req.Reference},
	} {
		if f.was != f.now {
			diffs = append(diffs, fmt.Sprintf("%s %q, was %q", f.name, f.now, f.was))
		}
	}
	return strings.Join(diffs, "; ")
}

// headerSafe reports whether s survives an HTTP header unchanged: no control
// characters and no surrounding whitespace (which servers trim). Accounts
// and keys must be header-safe so that Provider and Client agree on them.
func headerSafe(s string) bool {
	if strings.TrimSpace(s) != s {
		return false
	}
	return !strings.ContainsFunc(s, unicode.IsControl)
}

func validEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && domain != "" &&
		!strings.Contains(domain, "@") && !strings.ContainsAny(s, " \t\r\n")
}

// lookupLocked returns the record for rk, forgetting it first if it was
// committed Retention or longer ago. In-flight records never expire.
func (p *Provider) lookupLocked(rk recordKey, now time.Time) *record {
	rec := p.records[rk]
	if rec != nil && rec.committed && now.Sub(rec.committedAt) >= p.retention {
		delete(p.records, rk)
		return nil
	}
	return rec
}

func (p *Provider) statsLocked(account string) *Stats {
	st := p.stats[account]
	if st == nil {
		st = &Stats{}
		p.stats[account] = st
	}
	return st
}

func (p *Provider) outageLocked(now time.Time) (outage, bool) {
	for _, o := range p.outages {
		if o.covers(now) {
			return o, true
		}
	}
	return outage{}, false
}

// faultLocked takes the first scripted fault matching the call, or draws one
// from chaos; FaultNone when neither applies.
func (p *Provider) faultLocked(op Op, account, key string) Fault {
	for i, f := range p.script {
		if f.matches(op, account, key) {
			p.script = append(p.script[:i:i], p.script[i+1:]...)
			return f
		}
	}
	if p.chaos != nil {
		if f, ok := p.chaos.draw(op); ok {
			return f
		}
	}
	return Fault{}
}

// Script queues faults. Each call to Send or Status takes the first queued
// fault whose filters match it (so faults for different operations, accounts
// or keys wait for their own calls) and is then processed under it. Calls
// that find no matching fault fall through to chaos, if set. A call rejected
// by validation, an outage or a slowdown cap consumes no fault.
func (p *Provider) Script(faults ...Fault) {
	p.mu.Lock()
	p.script = append(p.script, faults...)
	p.mu.Unlock()
}

// PendingFaults returns how many scripted faults no call has taken yet.
func (p *Provider) PendingFaults() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.script)
}

// SetChaos installs random faults drawn from c (replacing any earlier
// chaos, with a fresh source seeded from c.Seed) and logs the configuration
// with its seed. Chaos with every probability zero turns chaos off. It panics
// if a probability is negative or above 1, or their sum exceeds 1.
func (p *Provider) SetChaos(c Chaos) {
	if err := c.validate(); err != nil {
		panic(err)
	}
	p.mu.Lock()
	if c.FailBeforeCommit == 0 && c.LoseResponse == 0 && c.Throttle == 0 && c.Slow == 0 {
		p.chaos = nil
		p.unlockNotify(p.logLocked("", "", "", FaultNone, "chaos off"))
		return
	}
	p.chaos = newChaosSource(c)
	p.unlockNotify(p.logLocked("", "", "", FaultNone, c.String()))
}

// Chaos returns the chaos configuration in effect (its Seed is the one to
// print on failure), and false when chaos is off.
func (p *Provider) Chaos() (Chaos, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.chaos == nil {
		return Chaos{}, false
	}
	return p.chaos.cfg, true
}

// Outage makes every call that arrives at or after from and before to fail
// with ErrUnavailable (after validation, before anything else). Instants are
// on the time package's clock; use time.Now().Add(...) inside a bubble.
// Outages accumulate.
func (p *Provider) Outage(from, to time.Time) {
	p.mu.Lock()
	p.outages = append(p.outages, outage{from: from, to: to})
	p.unlockNotify(p.logLocked("", "", "", FaultNone,
		fmt.Sprintf("outage scheduled from t=%v to t=%v", from.Sub(p.start), to.Sub(p.start))))
}

// SetSlowdown puts the provider in the degraded mode s (see Slowdown);
// SetSlowdown(Slowdown{}) ends it.
func (p *Provider) SetSlowdown(s Slowdown) {
	p.mu.Lock()
	p.slowdown = s
	out := "slowdown off"
	if s.active() {
		out = fmt.Sprintf("slowdown on: limit %d concurrent Sends per account, +%v latency, retry-after %v",
			s.Limit, s.Latency, s.retryAfter())
	}
	p.unlockNotify(p.logLocked("", "", "", FaultNone, out))
}

// OnCommit sets a hook called synchronously, in the committing Send's
// goroutine and outside the provider's lock, right after each new signing
// request is committed and before its answer is returned. A test uses it to
// observe the commit or to inject a crash exactly there (cancel the caller's
// context: the call then returns ErrTimeout although the request was
// delivered). nil removes the hook.
func (p *Provider) OnCommit(hook func(Delivery)) {
	p.mu.Lock()
	p.onCommit = hook
	p.mu.Unlock()
}

// Received returns how many signing requests recipient actually received:
// the property every lab checks (exactly one per intended operation).
func (p *Provider) Received(recipient string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, d := range p.deliveries {
		if d.Recipient == recipient {
			n++
		}
	}
	return n
}

// Deliveries returns, in commit order, the signing requests delivered to
// recipient.
func (p *Provider) Deliveries(recipient string) []Delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Delivery
	for _, d := range p.deliveries {
		if d.Recipient == recipient {
			out = append(out, d)
		}
	}
	return out
}

// AllDeliveries returns every delivery, in commit order.
func (p *Provider) AllDeliveries() []Delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Delivery(nil), p.deliveries...)
}

// Stats returns the counters of account.
func (p *Provider) Stats(account string) Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.stats[account]; st != nil {
		return *st
	}
	return Stats{}
}

// MaxInFlight returns the highest number of the account's Sends that were
// inside the provider at once (see Stats.MaxInFlight).
func (p *Provider) MaxInFlight(account string) int {
	return p.Stats(account).MaxInFlight
}

// ResetMaxInFlight restarts the account's peak from its current in-flight
// count, so a test can measure the concurrency after a slowdown began.
func (p *Provider) ResetMaxInFlight(account string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.statsLocked(account)
	st.MaxInFlight = st.InFlight
}
