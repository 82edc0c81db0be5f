package redissuite

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/fakeclock/fakeredis"
	"github.com/fourth-outcome/labkit/redisaddr/redisclient"
	"github.com/fourth-outcome/labkit/suites"
)

// target is the implementation under test: how to build its stores, and
// the lab's sentinels. Every case's env holds it.
type target struct {
	newStore func(rdb redis.UniversalClient, o Options) store
	errs     Errors
}

// store is Store with the claim type erased, so that the cases need no type
// parameters.
type store interface {
	Claim(ctx context.Context, tenant, key, fingerprint string) (any, error)
	ClaimRecord(ctx context.Context, tenant, key, fingerprint string) (any, recordView, error)
	Complete(ctx context.Context, c any, result string) error
	Release(ctx context.Context, c any) error
	Do(ctx context.Context, tenant, key, fingerprint string, work func(ctx context.Context) (string, error)) (string, error)
}

type erased[C, R any] struct{ s Store[C, R] }

func (e erased[C, R]) Claim(ctx context.Context, tenant, key, fingerprint string) (any, error) {
	c, _, err := e.s.Claim(ctx, tenant, key, fingerprint)
	return c, err
}

// recordView is what the suite can read of a lab's Record (by the fields
// the lab's README names): known is false when R has no such fields.
type recordView struct {
	known  bool
	done   bool
	result string
}

func (e erased[C, R]) ClaimRecord(ctx context.Context, tenant, key, fingerprint string) (any, recordView, error) {
	c, r, err := e.s.Claim(ctx, tenant, key, fingerprint)
	return c, viewOf(r), err
}

// viewOf reads a Record's Done and Result fields.
func viewOf(r any) recordView {
	v := reflect.ValueOf(r)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return recordView{known: true}
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return recordView{}
	}
	done, result := v.FieldByName("Done"), v.FieldByName("Result")
	if !done.IsValid() || done.Kind() != reflect.Bool || !result.IsValid() || result.Kind() != reflect.String {
		return recordView{}
	}
	return recordView{known: true, done: done.Bool(), result: result.String()}
}

func (e erased[C, R]) Complete(ctx context.Context, c any, result string) error {
	cc, _ := c.(C)
	return e.s.Complete(ctx, cc, result)
}

func (e erased[C, R]) Release(ctx context.Context, c any) error {
	cc, _ := c.(C)
	return e.s.Release(ctx, cc)
}

func (e erased[C, R]) Do(ctx context.Context, tenant, key, fingerprint string, work func(ctx context.Context) (string, error)) (string, error) {
	return e.s.Do(ctx, tenant, key, fingerprint, work)
}

// timing is the durations a case runs with. On virtual time they are the
// realistic ones; against a real server they are scaled down so that the
// suite still finishes in a few seconds. Margin is how far "just before" and
// "just after" a deadline are.
type timing struct {
	ClaimTTL  time.Duration
	Retention time.Duration
	Margin    time.Duration
}

var (
	virtualTiming = timing{ClaimTTL: 30 * time.Second, Retention: 24 * time.Hour, Margin: time.Second}
	realTiming    = timing{ClaimTTL: 500 * time.Millisecond, Retention: time.Second, Margin: 200 * time.Millisecond}
)

// promptly is how long a store may take to report a lost server (virtual
// time in a bubble, real time against a real server).
const promptly = 2 * time.Second

// env is what every case is handed: one case's world. It has a Redis
// server (miniredis in the case's bubble, or a real one under a private
// prefix), a clock that advance moves, an inspector connection the store
// never sees, and a factory for processes, each with its own store.
type env struct {
	t  testing.TB
	h  *suites.History
	tg *target
	timing
	virtual bool   // miniredis on virtual time
	prefix  string // Options.Prefix of every store in this case
	inspect *redis.Client
	options func() *redis.Options // connection settings for a new client
	dial    func(ctx context.Context) (net.Conn, error)
}

// simulatedEnv returns the env of one case on virtual time: a new
// miniredis inside the case's bubble, reached through in-memory pipes.
func (tg *target) simulatedEnv(t *testing.T, h *suites.History) *env {
	m, inspect := fakeredis.Start(t)
	return &env{
		t: t, h: h, tg: tg, timing: virtualTiming, virtual: true,
		prefix:  "labkit:test:sim:",
		inspect: inspect,
		options: func() *redis.Options { return &redis.Options{Addr: "miniredis.pipe"} },
		dial:    func(context.Context) (net.Conn, error) { return m.Dial() },
	}
}

// goCall runs f in its own goroutine (see suites.Go); a panic in it fails
// the case instead of ending the test binary.
func (e *env) goCall(f func()) *suites.Call {
	return suites.Go(func() { suites.Guard(e.t, f) })
}

// advance moves the clock forward by d and says so in the timeline. On a
// real server it waits until the server's own clock has moved d, so that
// key expiry, which the server measures, has seen the time pass.
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	e.h.Note("%v pass", d)
	if e.virtual {
		fakeclock.Advance(d)
		return
	}
	start := e.serverTime()
	limit := time.Now().Add(d + 5*time.Second)
	for {
		passed := e.serverTime().Sub(start)
		if passed >= d {
			return
		}
		if time.Now().After(limit) {
			e.t.Fatalf("the Redis server's clock moved only %v while the suite waited for %v", passed, d)
		}
		time.Sleep(min(d-passed, 5*time.Millisecond))
	}
}

func (e *env) serverTime() time.Time {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	now, err := e.inspect.Time(ctx).Result()
	if err != nil {
		e.t.Fatalf("redis TIME: %v", err)
	}
	return now
}

// waitUntil reports whether cond became true in a bounded wait. It never
// waits on the virtual clock, so a goroutine stuck on a mutex inside the
// store (which freezes a bubble's clock) is reported instead of hanging the
// case.
func (e *env) waitUntil(cond func() bool) bool {
	if e.virtual {
		for range 2_000_000 {
			if cond() {
				return true
			}
			runtime.Gosched()
		}
		return cond()
	}
	limit := time.Now().Add(3 * time.Second)
	for time.Now().Before(limit) {
		if cond() {
			return true
		}
		time.Sleep(100 * time.Microsecond)
	}
	return cond()
}

// returnsPromptly reports whether call returns within promptly. stop, when
// closed, cuts the wait short (a store hammering a dead server).
func (e *env) returnsPromptly(call *suites.Call, stop <-chan struct{}) bool {
	timer := time.NewTimer(promptly)
	defer timer.Stop()
	select {
	case <-call.Done():
		return true
	case <-timer.C:
		return false
	case <-stop:
		return call.Returned()
	}
}

// keyInfo is one key under the case's prefix and its remaining time to
// live in milliseconds (-1: no expiry).
type keyInfo struct {
	name string
	pttl int64
}

// keys lists the keys under the case's prefix, with their TTLs, as the
// server sees them now.
func (e *env) keys() []keyInfo {
	e.t.Helper()
	keys, err := e.scan(e.prefix+"*", true)
	if err != nil {
		e.t.Fatal(err)
	}
	return keys
}

// keysOutsidePrefix lists keys that do not start with the case's prefix.
// Only meaningful on the private miniredis.
func (e *env) keysOutsidePrefix() []string {
	e.t.Helper()
	keys, err := e.scan("*", false)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		if !strings.HasPrefix(k.name, e.prefix) {
			out = append(out, k.name)
		}
	}
	return out
}

// scan lists the keys matching match, with their TTLs if ttl is set. It
// may be called from any goroutine.
func (e *env) scan(match string, ttl bool) ([]keyInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	var out []keyInfo
	iter := e.inspect.Scan(ctx, 0, match, 1000).Iterator()
	for iter.Next(ctx) {
		k := keyInfo{name: iter.Val()}
		if ttl {
			n, err := e.inspect.Do(ctx, "PTTL", k.name).Int64()
			if err != nil {
				return nil, fmt.Errorf("redis PTTL %s: %v", k.name, err)
			}
			if n == -2 { // expired between SCAN and PTTL
				continue
			}
			k.pttl = n
		}
		out = append(out, k)
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("redis SCAN %s: %v", match, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// short is a key or a command as the student reads it: without the case's
// private prefix.
func (e *env) short(s string) string {
	return strings.ReplaceAll(s, e.prefix, "")
}

// describe renders a Do result for the timeline.
func (e *env) describe(v string, err error) string {
	if err == nil {
		return fmt.Sprintf("returned %q", v)
	}
	return e.describeErr(err)
}

// describeErr renders an error result for the timeline, naming the lab's
// sentinel it matches.
func (e *env) describeErr(err error) string {
	errs := e.tg.errs
	switch {
	case err == nil:
		return "ok (nil error)"
	case errors.Is(err, errs.InProgress):
		return "in progress: " + shortErr(err)
	case errors.Is(err, errs.FingerprintMismatch):
		return "rejected, fingerprint mismatch: " + shortErr(err)
	case errors.Is(err, errs.InvalidKey):
		return "rejected, invalid key: " + shortErr(err)
	case errors.Is(err, errs.ClaimLost):
		return "claim lost: " + shortErr(err)
	default:
		return "error: " + shortErr(err)
	}
}

// shortErr is err's message, cut to a readable length (an error may quote
// a 10 KB key).
func shortErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return clip(strings.ReplaceAll(err.Error(), "\n", "; "), 160)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// show quotes a tenant or key for a message, abbreviating long ones.
func show(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%q… (%d bytes)", s[:12], len(s))
	}
	return strconv.Quote(s)
}

// errCrashed is what every command of a crashed process gets.
var errCrashed = errors.New("connection lost: the worker's process crashed (injected by the suite)")

// errInjected is what one command gets when the suite makes Redis fail it
// (failAt): a timeout, as a busy or unreachable server gives.
var errInjected = errors.New("i/o timeout (a Redis failure injected by the suite)")

// failNext arms the process so that the k-th command it sends from now on
// fails with errInjected, and clears the record of an earlier failure.
func (p *proc) failNext(k int64) {
	p.failed.Store(false)
	p.failAt.Store(p.sent.Load() + k)
}

// errServerGone is what a dial gets while the suite has taken the server
// away from a process.
var errServerGone = errors.New("dial redis: connection refused (the suite took the server away)")

// gateFunc is called before a process sends its n-th command (counted from
// the process's start, connection setup excluded).
type gateFunc func(n int64, cmd string)

// proc is one simulated process: its own connection pool to the server, its
// own store object, and the suite's hooks on every command it sends. The
// hooks can crash the process after a given command (every later command
// fails without reaching the server), hold a command back until the case
// lets it go, and take the server away.
type proc struct {
	name  string
	e     *env
	rdb   *redis.Client
	store store

	sent      atomic.Int64           // commands (or pipelines) sent
	crashAt   atomic.Int64           // 0: never crash; n: commands after the n-th fail
	crashed   atomic.Bool            // a command was refused because of crashAt
	onCrash   atomic.Pointer[func()] // called once, at the crash, in the process's goroutine
	gate      atomic.Pointer[gateFunc]
	failAt    atomic.Int64  // 0: never; n: the n-th command fails with errInjected, once
	loseAt    atomic.Int64  // 0: never; n: the n-th command takes effect, and its reply is lost
	dropRead  atomic.Bool   // the next read from the server fails and breaks its connection
	failed    atomic.Bool   // a command was failed because of failAt
	dials     atomic.Int64  // dials refused while the server was away
	refused   atomic.Int64  // commands refused after a crash
	storm     chan struct{} // closed after 50 refused dials or commands
	stormOnce sync.Once

	mu    sync.Mutex // guards the fields below; held only briefly
	cmds  []string   // commands sent, as the timeline shows them
	conns []net.Conn
	down  bool
}

// proc starts a new process named name: a new client and a new store with
// the case's options.
func (e *env) proc(name string) *proc {
	e.t.Helper()
	return e.procWith(name, Options{Prefix: e.prefix, ClaimTTL: e.ClaimTTL, Retention: e.Retention})
}

// procWith starts a new process whose store is built with o (whose Prefix
// must be the case's).
func (e *env) procWith(name string, o Options) *proc {
	e.t.Helper()
	p := &proc{name: name, e: e, storm: make(chan struct{})}
	opts := e.options()
	opts.Dialer = p.dialer
	opts.MaxRetries = -1 // the suite decides what fails; no hidden resends
	opts.DialTimeout = time.Second
	opts.DialerRetries = 1
	opts.ReadTimeout = time.Second
	opts.WriteTimeout = time.Second
	opts.ConnMaxIdleTime = -1
	opts.ConnMaxLifetime = -1
	opts.DisableIdentity = true
	opts.Protocol = 2
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	p.rdb = redis.NewClient(opts)
	p.rdb.AddHook(p)
	e.t.Cleanup(func() { _ = p.rdb.Close() })
	p.store = suites.Construct(func() store { return e.tg.newStore(p.rdb, o) })
	return p
}

// close ends the process's connections, as a process that died would.
func (p *proc) close() { _ = p.rdb.Close() }

func (p *proc) dialer(ctx context.Context, network, addr string) (net.Conn, error) {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		if p.dials.Add(1) >= 50 {
			p.stormOnce.Do(func() { close(p.storm) })
		}
		return nil, errServerGone
	}
	c, err := p.e.dial(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		_ = c.Close()
		return nil, errServerGone
	}
	p.conns = append(p.conns, c)
	return &lossyConn{Conn: c, p: p}, nil
}

// cut takes the server away from the process: open connections drop and
// new ones are refused, as when the server dies or the network fails.
func (p *proc) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// restore gives the server back.
func (p *proc) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// cmd returns the n-th command the process sent (1-based), for messages.
func (p *proc) cmd(n int64) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n < 1 || int(n) > len(p.cmds) {
		return "?"
	}
	return p.cmds[n-1]
}

// DialHook implements redis.Hook.
func (p *proc) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (p *proc) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if setup(cmd) {
			return next(ctx, cmd)
		}
		desc := p.e.describeCmds(cmd)
		n, err := p.before(desc)
		if err != nil {
			cmd.SetErr(err)
			return err
		}
		p.lose(n, desc)
		defer p.dropRead.Store(false)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook. A pipeline (or a MULTI/EXEC
// transaction) counts as one command: a crash cannot fall inside it.
func (p *proc) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		all := true
		for _, c := range cmds {
			all = all && setup(c)
		}
		if all {
			return next(ctx, cmds)
		}
		desc := p.e.describeCmds(cmds...)
		n, err := p.before(desc)
		if err != nil {
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		p.lose(n, desc)
		defer p.dropRead.Store(false)
		return next(ctx, cmds)
	}
}

// setup reports whether cmd is part of go-redis's connection handshake,
// which the suite neither counts nor holds back.
func setup(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "auth", "client", "select":
		return true
	}
	return false
}

// lose arms the connection to drop, if the n-th command's reply is to be
// lost (loseAt): the command reaches the server, which carries it out,
// and the connection breaks before the reply is read, as when the network
// fails at that moment. The process gets errInjected, and the broken
// connection (with whatever state the server kept for it, a WATCH) is
// gone, as it would be.
func (p *proc) lose(n int64, desc string) {
	if at := p.loseAt.Load(); at == 0 || n != at {
		return
	}
	p.failed.Store(true)
	p.dropRead.Store(true)
	p.e.h.Recordf(p.name, "sends "+desc, "Redis carries it out, but the connection drops before the reply: %v", errInjected)
}

// lossyConn is a connection to the server that can drop before a reply
// (proc.lose).
type lossyConn struct {
	net.Conn
	p *proc
}

func (c *lossyConn) Read(b []byte) (int, error) {
	if c.p.dropRead.CompareAndSwap(true, false) {
		_ = c.Conn.Close()
		return 0, errInjected
	}
	return c.Conn.Read(b)
}

// loseNext arms the process so that the reply to the k-th command it sends
// from now on is lost after the server carried the command out, and clears
// the record of an earlier failure.
func (p *proc) loseNext(k int64) {
	p.failed.Store(false)
	p.loseAt.Store(p.sent.Load() + k)
}

func (p *proc) before(desc string) (int64, error) {
	n := p.sent.Add(1)
	if at := p.crashAt.Load(); at > 0 && n > at {
		if !p.crashed.Swap(true) {
			p.e.h.Recordf(p.name, "process crashes", "after command %d: %s", at, p.cmd(at))
			if f := p.onCrash.Load(); f != nil {
				(*f)()
			}
		}
		if p.refused.Add(1) >= 50 {
			p.stormOnce.Do(func() { close(p.storm) })
		}
		return n, errCrashed
	}
	if at := p.failAt.Load(); at > 0 && n == at {
		p.failed.Store(true)
		p.mu.Lock()
		p.cmds = append(p.cmds, desc+" (failed by the suite)")
		p.mu.Unlock()
		p.e.h.Recordf(p.name, "sends "+desc, "fails: %v", errInjected)
		return n, errInjected
	}
	p.mu.Lock()
	p.cmds = append(p.cmds, desc)
	p.mu.Unlock()
	if g := p.gate.Load(); g != nil {
		(*g)(n, desc)
	}
	return n, nil
}

// describeCmds renders commands for the timeline: "SET idem:acme:k1 … NX PX
// 30000", with the private prefix removed and long arguments cut.
func (e *env) describeCmds(cmds ...redis.Cmder) string {
	parts := make([]string, 0, len(cmds))
	for _, c := range cmds {
		args := c.Args()
		var b strings.Builder
		for i, a := range args {
			if i > 0 {
				b.WriteByte(' ')
			}
			if i >= 7 {
				b.WriteString("…")
				break
			}
			s := e.short(fmt.Sprint(a))
			switch {
			case i == 0 || options[s]:
				s = strings.ToUpper(s)
			default:
				if len(s) > 32 {
					s = clip(s, 24)
				}
				if strings.ContainsAny(s, " \"\\") || !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' }) {
					s = strconv.Quote(s)
				}
			}
			b.WriteString(s)
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "; ")
}

// options are the command options go-redis sends in lower case; the
// timeline shows them as the Redis documentation does.
var options = map[string]bool{"nx": true, "xx": true, "px": true, "ex": true, "get": true, "keepttl": true}

// counter counts and narrates the executions of a work function.
type counter struct {
	n atomic.Int64
}

// work returns a work function that records its execution as actor and
// returns value.
func (c *counter) work(h *suites.History, actor, value string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		c.executed(h, actor)
		return value, nil
	}
}

func (c *counter) executed(h *suites.History, actor string) {
	n := c.n.Add(1)
	if h == nil {
		return
	}
	if n == 1 {
		h.Record(actor, "work starts", "first execution")
	} else {
		h.Recordf(actor, "work starts", "EXECUTION #%d: the side effect happened again", n)
	}
}

// Do calls the process's store and records the call in the timeline.
func (p *proc) Do(tenant, key, fingerprint string, work func(context.Context) (string, error)) (string, error) {
	return p.DoAs(fmt.Sprintf("Do(%s, %s)", show(tenant), show(key)), tenant, key, fingerprint, work)
}

// DoAs is Do with the timeline's action spelled out.
func (p *proc) DoAs(action, tenant, key, fingerprint string, work func(context.Context) (string, error)) (string, error) {
	v, err := p.store.Do(context.Background(), tenant, key, fingerprint, work)
	p.e.h.Record(p.name, action, p.e.describe(v, err))
	return v, err
}

// Claim calls the process's store and records the call.
func (p *proc) Claim(tenant, key, fingerprint string) (any, error) {
	c, err := p.store.Claim(context.Background(), tenant, key, fingerprint)
	outcome := "holds the claim"
	if err != nil {
		outcome = p.e.describeErr(err)
	}
	p.e.h.Record(p.name, fmt.Sprintf("Claim(%s, %s)", show(tenant), show(key)), outcome)
	return c, err
}

// Complete calls the process's store and records the call.
func (p *proc) Complete(c any, result string) error {
	err := p.store.Complete(context.Background(), c, result)
	p.e.h.Record(p.name, fmt.Sprintf("Complete(its claim, %q)", result), p.e.describeErr(err))
	return err
}

// Release calls the process's store and records the call.
func (p *proc) Release(c any) error {
	err := p.store.Release(context.Background(), c)
	p.e.h.Record(p.name, "Release(its claim)", p.e.describeErr(err))
	return err
}

// realServer is the Redis server named by REDIS_ADDR, shared by every case
// of one Run. Each case gets its own prefix under a prefix unique to the run.
type realServer struct {
	addr  string
	base  *redis.Options // address, credentials, database, TLS
	run   string         // "labkit:test:<random>:"
	cases atomic.Int64
	admin *redis.Client
}

// connectReal connects to addr, checks that it answers and that it holds no
// keys outside "labkit:" (unless allowForeign), and returns the server. Its
// errors are one line, for t.Fatal.
func connectReal(addr string, allowForeign bool) (*realServer, error) {
	base, err := redisclient.Options(addr)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %v", AddrEnv, addr, err)
	}
	if err := redisclient.Check(context.Background(), addr, allowForeign); err != nil {
		return nil, fmt.Errorf("%s=%s: %v (start an empty server there, or unset %s to run on the embedded miniredis)", AddrEnv, addr, err, AddrEnv)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	s := &realServer{addr: addr, base: base, run: "labkit:test:" + hex.EncodeToString(rnd[:]) + ":"}
	s.admin = redis.NewClient(s.options())
	return s, nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// options returns a fresh client configuration for the server, with short
// timeouts: a server that stops answering is an error within a second.
func (s *realServer) options() *redis.Options {
	return &redis.Options{
		Addr:                     s.base.Addr,
		Network:                  s.base.Network,
		Username:                 s.base.Username,
		Password:                 s.base.Password,
		DB:                       s.base.DB,
		TLSConfig:                s.base.TLSConfig,
		DialTimeout:              time.Second,
		DialerRetries:            1,
		ReadTimeout:              time.Second,
		WriteTimeout:             time.Second,
		MaxRetries:               -1,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}

func (s *realServer) dial(ctx context.Context) (net.Conn, error) {
	network := s.base.Network
	if network == "" {
		network = "tcp"
	}
	d := &net.Dialer{Timeout: time.Second}
	if s.base.TLSConfig != nil {
		return (&tls.Dialer{NetDialer: d, Config: s.base.TLSConfig}).DialContext(ctx, network, s.base.Addr)
	}
	return d.DialContext(ctx, network, s.base.Addr)
}

// newEnv returns the env of one case on the real server: a prefix of its
// own, deleted (and only it) when the case ends.
func (s *realServer) newEnv(t *testing.T, h *suites.History, tg *target) *env {
	prefix := fmt.Sprintf("%s%d:", s.run, s.cases.Add(1))
	inspect := redis.NewClient(s.options())
	t.Cleanup(func() {
		defer inspect.Close()
		if err := deletePrefix(inspect, prefix); err != nil {
			t.Errorf("cleaning up the suite's keys %s*: %v", prefix, err)
		}
	})
	return &env{
		t: t, h: h, tg: tg, timing: realTiming,
		prefix:  prefix,
		inspect: inspect,
		options: s.options,
		dial:    s.dial,
	}
}

// deletePrefix deletes every key under prefix, which must be one of the
// suite's own.
func deletePrefix(rdb *redis.Client, prefix string) error {
	if !strings.HasPrefix(prefix, "labkit:test:") {
		return fmt.Errorf("refusing to delete keys under %q", prefix)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := rdb.Del(ctx, batch...).Err()
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	return flush()
}

func (s *realServer) close() { _ = s.admin.Close() }

// A lockstep holds several processes' commands back so that they reach the
// server in rounds: in each round every process that still has a command to
// send sends exactly one, and the next round starts only when all of them
// have their answers. Two processes that both "GET the key, then SET it"
// therefore both GET before either SETs, every time: the race a real
// deployment hits once in a while happens on every run.
type lockstep struct {
	e       *env
	workers []*stepWorker
	round   atomic.Pointer[chan struct{}] // closed to let the current round go
	on      atomic.Bool
}

// stepWorker is one process taking part in a lockstep.
type stepWorker struct {
	p     *proc
	state atomic.Int32
}

// Where a lockstep worker is.
const (
	stepRunning  int32 = iota // between two commands, or waiting for an answer
	stepAtGate                // holding its next command until the round starts
	stepInWork                // inside the work function (held on the case's gate)
	stepFinished              // its call returned
)

// lockstep arms the gates of procs.
func (e *env) lockstep(procs []*proc) *lockstep {
	ls := &lockstep{e: e}
	first := make(chan struct{})
	ls.round.Store(&first)
	ls.on.Store(true)
	for _, p := range procs {
		w := &stepWorker{p: p}
		ls.workers = append(ls.workers, w)
		g := gateFunc(func(n int64, cmd string) {
			if !ls.on.Load() {
				return
			}
			ch := ls.round.Load() // before announcing: see conduct
			w.state.Store(stepAtGate)
			<-*ch
			e.h.Record(p.name, "sends "+cmd, "")
		})
		p.gate.Store(&g)
	}
	return ls
}

// conduct runs rounds until no worker has a command left to send, then
// calls openWork so that a worker inside its work can finish, and switches
// the lockstep off. It returns the names of workers that neither sent a
// command nor finished nor entered the work within a bounded wait: stuck
// inside the store.
func (ls *lockstep) conduct(openWork func()) (stuck []string) {
	defer ls.stop()
	quiet := func() bool {
		for _, w := range ls.workers {
			if w.state.Load() == stepRunning {
				return false
			}
		}
		return true
	}
	for range 1000 {
		if !ls.e.waitUntil(quiet) {
			for _, w := range ls.workers {
				if w.state.Load() == stepRunning {
					stuck = append(stuck, w.p.name)
				}
			}
			openWork()
			return stuck
		}
		var gated []*stepWorker
		for _, w := range ls.workers {
			if w.state.Load() == stepAtGate {
				gated = append(gated, w)
			}
		}
		if len(gated) == 0 {
			openWork()
			return nil
		}
		// A worker loads the round's channel before it announces itself at
		// the gate, so every announced worker waits on the channel closed
		// here, and the next command anyone sends waits for the next round.
		next := make(chan struct{})
		old := ls.round.Swap(&next)
		for _, w := range gated {
			w.state.Store(stepRunning)
		}
		close(*old)
	}
	openWork()
	return nil
}

// stop lets every held and future command through.
func (ls *lockstep) stop() {
	if ls.on.Swap(false) {
		close(*ls.round.Load())
	}
}
