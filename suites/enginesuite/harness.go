package enginesuite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/fourth-outcome/labkit/fakeclock"
	"github.com/fourth-outcome/labkit/fakeclock/fakeredis"
	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/redisaddr"
	"github.com/fourth-outcome/labkit/redisaddr/redisclient"
	"github.com/fourth-outcome/labkit/suites"
	"github.com/fourth-outcome/labkit/task"
)

// target is what every case is handed: the lab's constructors and, when
// the suite runs against a real server, that server; and the test it was
// built for (a model case's sequence builds its world from it, in the
// sequence's bubble).
type target struct {
	impl Impl
	real *realServer
	t    *testing.T
}

// realServer is a real Redis server the suite may use (REDIS_ADDR).
type realServer struct {
	addr string
	base string // this run's namespace root, "labkit:test:engine:<hex>"
	seq  atomic.Int64
}

func connectReal(addr string, allowForeign bool) (*realServer, error) {
	if err := redisclient.Check(context.Background(), addr, allowForeign); err != nil {
		return nil, fmt.Errorf("enginesuite: %w", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &realServer{addr: addr, base: "labkit:test:engine:" + hex.EncodeToString(b[:])}, nil
}

// The backends every case runs on, in order.
const (
	memoryKind = "memory"
	redisKind  = "redis"
)

// onBackend runs check against one backend kind, in a world of its own.
// Lab 10's cases that hold for both backends run once per backend, as two
// cases of their own (see perBackend), so that a correct memory backend
// earns its half while the Redis one is unstarted.
func onBackend(kind string, check func(w *world)) func(*testing.T, *suites.History, *target) {
	return func(t *testing.T, h *suites.History, tg *target) {
		t.Helper()
		h.Note("=== the %s backend ===", kind)
		check(newWorld(t, h, tg, kind))
	}
}

// redisOnly runs check against the Redis backend only.
func redisOnly(check func(w *world)) func(*testing.T, *suites.History, *target) {
	return func(t *testing.T, h *suites.History, tg *target) {
		t.Helper()
		h.Note("=== the redis backend ===")
		check(newWorld(t, h, tg, redisKind))
	}
}

// world is one backend kind in one case: the suite's clock, a provider,
// and (for Redis) a server and the means to connect processes to it.
type world struct {
	t     *testing.T
	h     *suites.History
	tg    *target
	kind  string
	clock *clock
	p     *provider.Provider

	mu    sync.Mutex
	sends []sendCall // every Send that reached the provider

	// Redis only.
	inspect *redis.Client
	newOpts func() *redis.Options
	nsRoot  string
	nsSeq   int
	virtual bool
}

// sendCall is one Send the provider received from a worker.
type sendCall struct {
	worker, account, key, doc string
}

func newWorld(t *testing.T, h *suites.History, tg *target, kind string) *world {
	w := &world{t: t, h: h, tg: tg, kind: kind, clock: &clock{now: fakeclock.Epoch},
		p: provider.New(provider.Options{Retention: 365 * 24 * time.Hour})}
	if kind != redisKind {
		return w
	}
	if tg.real == nil {
		m, inspect := fakeredis.Start(t)
		w.virtual = true
		w.inspect = inspect
		w.nsRoot = "labkit:test:sim"
		w.newOpts = func() *redis.Options { return pipeOptions(m) }
		return w
	}
	srv := tg.real
	w.nsRoot = fmt.Sprintf("%s:%d", srv.base, srv.seq.Add(1))
	w.newOpts = func() *redis.Options {
		o, err := redisclient.Options(srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		o.ConnMaxIdleTime, o.ConnMaxLifetime = -1, -1
		o.Protocol = 2
		return o
	}
	w.inspect = redis.NewClient(w.newOpts())
	// The database held no key outside "labkit:" when the run started
	// (redisaddr.Check), unless the user allowed it: remember those, so
	// that a key the implementation wrote outside its namespace can be
	// deleted afterwards too.
	foreign := w.foreignKeys()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		iter := w.inspect.Scan(ctx, 0, w.nsRoot+":*", 1000).Iterator()
		for iter.Next(ctx) {
			w.inspect.Del(ctx, iter.Val())
		}
		for k := range w.foreignKeys() {
			if !foreign[k] {
				w.inspect.Del(ctx, k)
			}
		}
		_ = w.inspect.Close()
	})
	return w
}

// foreignKeys returns the keys outside "labkit:" on a real server.
func (w *world) foreignKeys() map[string]bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out := map[string]bool{}
	iter := w.inspect.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		if !strings.HasPrefix(iter.Val(), redisaddr.KeyPrefix) {
			out[iter.Val()] = true
		}
	}
	return out
}

func pipeOptions(m *miniredis.Miniredis) *redis.Options {
	return &redis.Options{
		Addr:            "miniredis.pipe",
		Dialer:          func(context.Context, string, string) (net.Conn, error) { return m.Dial() },
		ConnMaxIdleTime: -1,
		ConnMaxLifetime: -1,
		DisableIdentity: true,
		Protocol:        2,
		MaxRetries:      -1,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	}
}

// Errorf and Fatalf name the backend in front of the message.
func (w *world) Errorf(format string, args ...any) {
	w.t.Helper()
	w.t.Errorf("[%s backend] "+format, append([]any{w.kind}, args...)...)
}

func (w *world) Fatalf(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("[%s backend] "+format, append([]any{w.kind}, args...)...)
}

// clock is the suite's clock: every backend reads it through Options.Now,
// and only the case moves it. It starts at fakeclock.Epoch, on a whole
// millisecond, and moves by whole milliseconds.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) since() time.Duration { return c.Now().Sub(fakeclock.Epoch) }

// advance moves the clock forward by d.
func (w *world) advance(d time.Duration) {
	w.clock.mu.Lock()
	w.clock.now = w.clock.now.Add(d)
	w.clock.mu.Unlock()
	w.h.Note("%v pass (the backend's clock is at +%v)", d, w.clock.since())
}

// at returns the instant +d on the suite's clock.
func at(d time.Duration) time.Time { return fakeclock.Epoch.Add(d) }

// store is one backend: a memory backend, or a Redis namespace that every
// process of the case opens with the same options.
type store struct {
	w   *world
	o   Options
	ns  string
	mem Backend
}

// newStore makes a backend with o, whose clock is the suite's.
func (w *world) newStore(o Options) *store {
	w.t.Helper()
	if o.Now == nil {
		o.Now = w.clock.Now
	}
	return w.newStoreRaw(o)
}

// newStoreRaw makes a backend with o exactly as given.
func (w *world) newStoreRaw(o Options) *store {
	w.t.Helper()
	s := &store{w: w, o: o}
	if w.kind == memoryKind {
		b, err := suites.Construct(func() (r built) {
			r.b, r.err = w.tg.impl.NewMemory(o)
			return r
		}).unpack()
		if err != nil {
			w.Fatalf("NewMemory: %v, want a backend (options %s)", err, showOptions(o))
		}
		if b == nil {
			w.Fatalf("NewMemory(%s) returned a nil backend", showOptions(o))
		}
		s.mem = b
		return s
	}
	w.nsSeq++
	s.ns = fmt.Sprintf("%s:%d", w.nsRoot, w.nsSeq)
	return s
}

// proc is one process using a store: for Redis, its own client (with the
// suite's hook) and its own backend value; for memory, the one backend.
type proc struct {
	name string
	w    *world
	st   *store
	b    Backend
	rdb  *redis.Client
	hk   *hook
}

// proc opens the store in a new process named name.
func (s *store) proc(name string) *proc {
	s.w.t.Helper()
	p := &proc{name: name, w: s.w, st: s}
	if s.w.kind == memoryKind {
		p.b = s.mem
		return p
	}
	p.hk = &hook{name: name, h: s.w.h}
	opts := s.w.newOpts()
	p.rdb = redis.NewClient(opts)
	p.rdb.AddHook(p.hk)
	s.w.t.Cleanup(func() { _ = p.rdb.Close() })
	b, err := suites.Construct(func() (r built) {
		r.b, r.err = s.w.tg.impl.NewRedis(p.rdb, s.ns, s.o)
		return r
	}).unpack()
	if err != nil {
		s.w.Fatalf("NewRedis: %v, want a backend (namespace %q, options %s)", err, s.ns, showOptions(s.o))
	}
	if b == nil {
		s.w.Fatalf("NewRedis returned a nil backend")
	}
	p.b = b
	return p
}

// tryNew builds a backend with o and returns the constructor's error.
func (w *world) tryNew(o Options) error {
	if w.kind == memoryKind {
		_, err := w.tg.impl.NewMemory(o)
		return err
	}
	rdb := redis.NewClient(w.newOpts())
	defer rdb.Close()
	_, err := w.tg.impl.NewRedis(rdb, w.nsRoot+":opts", o)
	return err
}

// built is what a constructor returned.
type built struct {
	b   Backend
	err error
}

func (r built) unpack() (Backend, error) { return r.b, r.err }

// errInjected is what one Redis command gets when the suite fails it.
var errInjected = errors.New("i/o timeout (a Redis failure injected by the suite)")

// hook is the suite's go-redis hook on a process's client: it counts the
// commands the process sends (a pipeline or MULTI/EXEC counts as one), can
// fail the n-th one before it reaches the server, or lose its reply after
// the server carried it out, and can hold each one back (gate) until the
// case lets it go.
type hook struct {
	name   string
	h      *suites.History
	sent   atomic.Int64
	failAt atomic.Int64 // 0: never
	loseAt atomic.Int64 // 0: never
	failed atomic.Bool  // a command was failed or its reply lost
	gate   atomic.Pointer[func(n int64)]
}

// failNext makes the k-th command from now on fail with errInjected.
func (k *hook) failNext(n int64) {
	k.failed.Store(false)
	k.failAt.Store(k.sent.Load() + n)
}

// loseNext makes the k-th command from now on reach the server, which
// carries it out, and its reply be lost: the process gets errInjected.
func (k *hook) loseNext(n int64) {
	k.failed.Store(false)
	k.loseAt.Store(k.sent.Load() + n)
}

// disarm cancels a failure or loss armed and not reached.
func (k *hook) disarm() {
	k.failAt.Store(0)
	k.loseAt.Store(0)
}

func (k *hook) before(desc string) (int64, error) {
	n := k.sent.Add(1)
	if g := k.gate.Load(); g != nil {
		(*g)(n)
	}
	if n == k.failAt.Load() {
		k.failed.Store(true)
		k.h.Recordf(k.name, desc, "fails: %v", errInjected)
		return n, errInjected
	}
	return n, nil
}

// after loses the reply to the n-th command if it is the one armed.
func (k *hook) after(n int64, desc string) error {
	if n != k.loseAt.Load() {
		return nil
	}
	k.failed.Store(true)
	k.h.Recordf(k.name, desc, "Redis carries it out, and the reply is lost: %v", errInjected)
	return errInjected
}

func (k *hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (k *hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if handshake(cmd) {
			return next(ctx, cmd)
		}
		n, err := k.before(cmd.Name())
		if err != nil {
			cmd.SetErr(err)
			return err
		}
		err = next(ctx, cmd)
		if lost := k.after(n, cmd.Name()); lost != nil {
			cmd.SetErr(lost)
			return lost
		}
		return err
	}
}

func (k *hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		names := make([]string, 0, len(cmds))
		all := true
		for _, c := range cmds {
			all = all && handshake(c)
			names = append(names, c.Name())
		}
		if all {
			return next(ctx, cmds)
		}
		desc := strings.Join(names, " ")
		n, err := k.before(desc)
		if err != nil {
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		err = next(ctx, cmds)
		if lost := k.after(n, desc); lost != nil {
			for _, c := range cmds {
				c.SetErr(lost)
			}
			return lost
		}
		return err
	}
}

// handshake reports whether cmd is connection housekeeping, which the
// suite neither counts, holds back nor fails: go-redis's handshake, and the
// UNWATCH that ends an optimistic transaction (it changes no data).
func handshake(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "auth", "client", "select", "unwatch":
		return true
	}
	return false
}

// callTimeout bounds every call the suite makes, so that a stuck backend
// is reported instead of hanging the case.
const callTimeout = 10 * time.Second

func (p *proc) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), callTimeout)
}

func (p *proc) submit(j task.Job) (bool, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	ok, err := p.b.Submit(ctx, j)
	p.w.h.Record(p.name, fmt.Sprintf("Submit(%s)", j.ID), fmt.Sprintf("%v, %s", ok, describeErr(err)))
	return ok, err
}

func (p *proc) lease() (task.JobLease, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	l, err := p.b.Lease(ctx, p.name)
	p.w.h.Record(p.name, "Lease()", describeLease(l, err))
	return l, err
}

func (p *proc) checkpoint(l task.JobLease, step int) (task.JobLease, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	nl, err := p.b.Checkpoint(ctx, l, step)
	p.w.h.Record(p.name, fmt.Sprintf("Checkpoint(%s token %d, %d)", l.Job.ID, l.Token, step), describeLease(nl, err))
	return nl, err
}

func (p *proc) complete(l task.JobLease) error {
	ctx, cancel := p.ctx()
	defer cancel()
	err := p.b.Complete(ctx, l)
	p.w.h.Record(p.name, fmt.Sprintf("Complete(%s token %d)", l.Job.ID, l.Token), describeErr(err))
	return err
}

func (p *proc) fail(l task.JobLease, cause error) error {
	ctx, cancel := p.ctx()
	defer cancel()
	err := p.b.Fail(ctx, l, cause)
	p.w.h.Record(p.name, fmt.Sprintf("Fail(%s token %d, %q)", l.Job.ID, l.Token, cause), describeErr(err))
	return err
}

func (p *proc) inspect(id string) (task.JobInfo, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	in, err := p.b.Inspect(ctx, id)
	if err != nil {
		p.w.h.Record(p.name, fmt.Sprintf("Inspect(%s)", id), describeErr(err))
	} else {
		p.w.h.Record(p.name, fmt.Sprintf("Inspect(%s)", id), in.String())
	}
	return in, err
}

// mustLease leases and fails the case unless a job was delivered.
func (p *proc) mustLease() task.JobLease {
	p.w.t.Helper()
	l, err := p.lease()
	if err != nil {
		p.w.Fatalf("%s: Lease() = %v, want a job", p.name, err)
	}
	return l
}

// mustSubmit submits and fails the case unless the job was stored.
func (p *proc) mustSubmit(j task.Job) {
	p.w.t.Helper()
	if ok, err := p.submit(j); !ok || err != nil {
		p.w.Fatalf("Submit(%s) = %v, %v, want true, <nil>", j.ID, ok, err)
	}
}

// mustInspect inspects and fails the case on an error.
func (p *proc) mustInspect(id string) task.JobInfo {
	p.w.t.Helper()
	in, err := p.inspect(id)
	if err != nil {
		p.w.Fatalf("Inspect(%s) = %v, want the job", id, err)
	}
	return in
}

// expectNoJob fails the case unless Lease finds nothing.
func (p *proc) expectNoJob(when string) {
	p.w.t.Helper()
	if l, err := p.lease(); !errors.Is(err, task.ErrNoJob) {
		p.w.Errorf("%s: Lease() = %s, want ErrNoJob", when, describeLease(l, err))
	}
}

// sentinels are the errors a backend may answer with, by name.
var sentinels = []struct {
	name string
	err  error
}{
	{"ErrNoJob", task.ErrNoJob}, {"ErrFull", task.ErrFull}, {"ErrConflict", task.ErrConflict},
	{"ErrInvalidJob", task.ErrInvalidJob}, {"ErrUnknownJob", task.ErrUnknownJob},
	{"ErrLeaseLost", task.ErrLeaseLost}, {"ErrInvalidOptions", task.ErrInvalidOptions},
	{"ErrPermanent", task.ErrPermanent},
}

// sentinelOf names the sentinel err matches, or "".
func sentinelOf(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return ""
}

func describeErr(err error) string {
	if err == nil {
		return "ok"
	}
	if name := sentinelOf(err); name != "" {
		return name + ": " + clip(err.Error())
	}
	return "error: " + clip(err.Error())
}

func describeLease(l task.JobLease, err error) string {
	if err != nil {
		return describeErr(err)
	}
	return fmt.Sprintf("%s, expires +%v", l, l.Expires.Sub(fakeclock.Epoch))
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

func showOptions(o Options) string {
	return fmt.Sprintf("{Capacity:%d VisibilityTimeout:%v MaxDeliveries:%d BaseBackoff:%v MaxBackoff:%v}",
		o.Capacity, o.VisibilityTimeout, o.MaxDeliveries, o.BaseBackoff, o.MaxBackoff)
}

// job returns a job with steps signing documents "<id>-doc-0", ... for
// "<id>@example.com".
func job(id string, steps int) task.Job {
	j := task.Job{ID: id, Account: "acct"}
	for i := range steps {
		j.Steps = append(j.Steps, task.Step{DocumentID: fmt.Sprintf("%s-doc-%d", id, i), Recipient: id + "@example.com", Subject: "please sign"})
	}
	return j
}

// snapshot renders every key of the store's namespace and its value, so
// that a case can tell whether a failed operation changed anything.
// keyNames returns, for each of the store's keys, what follows its
// namespace and each ':'-separated segment of that: the names a backend
// gives its own keys, as job IDs (at most 24, sorted).
func (s *store) keyNames() []string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	seen := map[string]bool{}
	iter := s.w.inspect.Scan(ctx, 0, s.ns+":*", 1000).Iterator()
	for iter.Next(ctx) {
		rest := strings.TrimPrefix(iter.Val(), s.ns+":")
		seen[rest] = true
		for _, seg := range strings.Split(rest, ":") {
			seen[seg] = true
		}
	}
	delete(seen, "")
	names := slices.Sorted(maps.Keys(seen))
	if len(names) > 24 {
		names = names[:24]
	}
	return names
}

func (s *store) snapshot() string {
	w := s.w
	w.t.Helper()
	if w.kind == memoryKind {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var keys []string
	iter := w.inspect.Scan(ctx, 0, s.ns+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		typ := w.inspect.Type(ctx, k).Val()
		var v any
		switch typ {
		case "hash":
			m := w.inspect.HGetAll(ctx, k).Val()
			var fs []string
			for f, x := range m {
				fs = append(fs, f+"="+x)
			}
			slices.Sort(fs)
			v = fs
		case "zset":
			v = w.inspect.ZRangeWithScores(ctx, k, 0, -1).Val()
		case "list":
			v = w.inspect.LRange(ctx, k, 0, -1).Val()
		case "set":
			m := w.inspect.SMembers(ctx, k).Val()
			slices.Sort(m)
			v = m
		default:
			v = w.inspect.Get(ctx, k).Val()
		}
		fmt.Fprintf(&b, "%s %s %v\n", k, typ, v)
	}
	return b.String()
}

// keysOutside lists the keys on the server that are not under the
// store's namespace + ":". On the case's private miniredis that is every
// other key; on a real server, which other runs may share, only the keys
// under this world's root (a key outside "labkit:" there could be another
// run's, and is deleted when the world ends).
func (s *store) keysOutside() []string {
	w := s.w
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	match := "*"
	if !w.virtual {
		match = w.nsRoot + ":*"
	}
	var out []string
	iter := w.inspect.Scan(ctx, 0, match, 1000).Iterator()
	for iter.Next(ctx) {
		if k := iter.Val(); !strings.HasPrefix(k, s.ns+":") {
			out = append(out, k)
		}
	}
	return out
}

// fault is what the suite does to one call a worker process makes.
type fault int

const (
	pass         fault = iota
	failBefore         // Send: the provider is unavailable, nothing committed
	loseReply          // Send: committed at the provider, the reply never arrives
	crashBefore        // the process dies before the call
	crashAfter         // the call is carried out, the process dies before it hears back
	cancelBefore       // the worker's context is cancelled just before the call
	cancelAfter        // the call is carried out, then the context is cancelled
	pause              // Send: committed, then the process stalls while others run
)

var faultNames = map[fault]string{pass: "pass", failBefore: "fails before committing", loseReply: "commits and loses the reply",
	crashBefore: "crashes before the call", crashAfter: "crashes after the call, before its reply",
	cancelBefore: "context cancelled before the call", cancelAfter: "context cancelled after the call", pause: "stalls after the call"}

// errCrashed is what every call of a crashed worker process gets.
var errCrashed = errors.New("the worker process crashed (injected by the suite)")

// wproc is one worker process: an engine built over its own backend
// (through the suite's crash wrapper) and the provider (through the
// suite's fault wrapper).
type wproc struct {
	name string
	w    *world
	proc *proc
	eng  Worker

	mu      sync.Mutex
	crashed bool
	script  map[string][]fault    // the next faults per operation ("Send", "Lease", ...)
	draw    func(op string) fault // chaos, when nothing is scripted
	onPause func()
	cancel  context.CancelFunc
}

// worker starts a worker process named name on the store.
func (s *store) worker(name string) *wproc {
	s.w.t.Helper()
	wp := &wproc{name: name, w: s.w, proc: s.proc(name), script: map[string][]fault{}}
	b := &crashingBackend{inner: wp.proc.b, wp: wp}
	api := &faultyAPI{inner: s.w.p, wp: wp}
	wp.eng = suites.Construct(func() Worker { return s.w.tg.impl.NewEngine(b, api) })
	if wp.eng == nil {
		s.w.Fatalf("NewEngine returned nil")
	}
	return wp
}

// plan scripts the faults of the next calls of op, in order.
func (wp *wproc) plan(op string, fs ...fault) {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	wp.script[op] = append(wp.script[op], fs...)
}

// work runs one Work call of the process.
func (wp *wproc) work() error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	wp.mu.Lock()
	wp.cancel = cancel
	wp.mu.Unlock()
	var err error
	suites.Guard(wp.w.t, func() { err = wp.eng.Work(ctx, wp.name) })
	wp.w.h.Record(wp.name, "Work()", describeErr(err))
	return err
}

// before is called before each call of the process: it returns the fault
// to apply, or errCrashed.
func (wp *wproc) before(op string) (fault, error) {
	wp.mu.Lock()
	if wp.crashed {
		wp.mu.Unlock()
		return pass, errCrashed
	}
	f := pass
	if q := wp.script[op]; len(q) > 0 {
		f, wp.script[op] = q[0], q[1:]
	} else if wp.draw != nil {
		f = wp.draw(op)
	}
	cancel := wp.cancel
	if f == crashBefore {
		wp.crashed = true
	}
	wp.mu.Unlock()
	switch f {
	case crashBefore:
		wp.w.h.Record(wp.name, op, "the process crashes before the call")
		return f, errCrashed
	case cancelBefore:
		wp.w.h.Record(wp.name, op, "the worker's context is cancelled before the call")
		if cancel != nil {
			cancel()
		}
	}
	return f, nil
}

// after is called after the call returned; it applies the fault's second
// half and returns errCrashed for a crash.
func (wp *wproc) after(f fault, op string) error {
	switch f {
	case crashAfter:
		wp.mu.Lock()
		wp.crashed = true
		wp.mu.Unlock()
		wp.w.h.Record(wp.name, op, "was carried out; the process crashes before it hears back")
		return errCrashed
	case cancelAfter:
		wp.mu.Lock()
		cancel := wp.cancel
		wp.mu.Unlock()
		wp.w.h.Record(wp.name, op, "was carried out; then the worker's context is cancelled")
		if cancel != nil {
			cancel()
		}
	}
	return nil
}

func (wp *wproc) isCrashed() bool {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	return wp.crashed
}

// crashingBackend is the backend as a worker process sees it: the suite
// can crash the process before or after any call.
type crashingBackend struct {
	inner Backend
	wp    *wproc
}

func call[T any](c *crashingBackend, op string, f func() (T, error)) (T, error) {
	var zero T
	fl, err := c.wp.before(op)
	if err != nil {
		return zero, err
	}
	v, err := f()
	if aerr := c.wp.after(fl, op); aerr != nil {
		return zero, aerr
	}
	return v, err
}

func (c *crashingBackend) Submit(ctx context.Context, j task.Job) (bool, error) {
	return call(c, "Submit", func() (bool, error) { return c.inner.Submit(ctx, j) })
}

func (c *crashingBackend) Lease(ctx context.Context, worker string) (task.JobLease, error) {
	return call(c, "Lease", func() (task.JobLease, error) { return c.inner.Lease(ctx, worker) })
}

func (c *crashingBackend) Checkpoint(ctx context.Context, l task.JobLease, step int) (task.JobLease, error) {
	return call(c, "Checkpoint", func() (task.JobLease, error) {
		nl, err := c.inner.Checkpoint(ctx, l, step)
		c.wp.w.h.Record(c.wp.name, fmt.Sprintf("Checkpoint(%s token %d, %d)", l.Job.ID, l.Token, step), describeLease(nl, err))
		return nl, err
	})
}

func (c *crashingBackend) Complete(ctx context.Context, l task.JobLease) error {
	_, err := call(c, "Complete", func() (struct{}, error) {
		err := c.inner.Complete(ctx, l)
		c.wp.w.h.Record(c.wp.name, fmt.Sprintf("Complete(%s token %d)", l.Job.ID, l.Token), describeErr(err))
		return struct{}{}, err
	})
	return err
}

func (c *crashingBackend) Fail(ctx context.Context, l task.JobLease, cause error) error {
	_, err := call(c, "Fail", func() (struct{}, error) {
		err := c.inner.Fail(ctx, l, cause)
		c.wp.w.h.Record(c.wp.name, fmt.Sprintf("Fail(%s token %d, %q)", l.Job.ID, l.Token, clip(fmt.Sprint(cause))), describeErr(err))
		return struct{}{}, err
	})
	return err
}

func (c *crashingBackend) Inspect(ctx context.Context, id string) (task.JobInfo, error) {
	return call(c, "Inspect", func() (task.JobInfo, error) { return c.inner.Inspect(ctx, id) })
}

// faultyAPI is the provider as a worker process sees it.
type faultyAPI struct {
	inner provider.API
	wp    *wproc
}

func (a *faultyAPI) Send(ctx context.Context, account, key string, req provider.SendRequest) (provider.Receipt, error) {
	wp := a.wp
	f, err := wp.before("Send")
	if err != nil {
		return provider.Receipt{}, err
	}
	desc := fmt.Sprintf("Send(key %q, %s)", key, req.DocumentID)
	if f == failBefore {
		wp.w.h.Record("provider", desc, "unavailable, nothing committed (injected)")
		return provider.Receipt{}, fmt.Errorf("send %q: %w (injected by the suite)", key, provider.ErrUnavailable)
	}
	wp.w.mu.Lock()
	wp.w.sends = append(wp.w.sends, sendCall{worker: wp.name, account: account, key: key, doc: req.DocumentID})
	wp.w.mu.Unlock()
	r, err := a.inner.Send(ctx, account, key, req)
	switch {
	case err != nil:
		wp.w.h.Record("provider", desc, describeErr(err))
	case r.Replayed:
		wp.w.h.Record("provider", desc, "replayed "+r.RequestID+" (no new delivery)")
	default:
		wp.w.h.Record("provider", desc, "committed "+r.RequestID)
	}
	switch f {
	case loseReply:
		if err == nil {
			wp.w.h.Record("provider", desc, "the reply is lost (injected): the provider's response timeout ends the call")
			// As the provider's own response timeout does, the error wraps
			// context.DeadlineExceeded: the provider's deadline, not Work's.
			return provider.Receipt{}, fmt.Errorf("send %q: %w (%w; the reply was lost, injected by the suite)", key, provider.ErrTimeout, context.DeadlineExceeded)
		}
	case cancelAfter:
		_ = wp.after(f, "Send")
		return provider.Receipt{}, fmt.Errorf("send %q: %w: %w", key, provider.ErrTimeout, context.Canceled)
	case pause:
		wp.w.h.Record(wp.name, desc, "stalls (a long GC pause) before it reads the reply")
		if wp.onPause != nil {
			wp.onPause()
		}
	}
	if aerr := wp.after(f, "Send"); aerr != nil {
		return provider.Receipt{}, aerr
	}
	return r, err
}

func (a *faultyAPI) Status(ctx context.Context, account, key string) (provider.Receipt, error) {
	if _, err := a.wp.before("Status"); err != nil {
		return provider.Receipt{}, err
	}
	return a.inner.Status(ctx, account, key)
}

func (a *faultyAPI) Find(ctx context.Context, account, reference string) ([]provider.Receipt, error) {
	if _, err := a.wp.before("Find"); err != nil {
		return nil, err
	}
	return a.inner.Find(ctx, account, reference)
}

// delivered counts the provider's deliveries of document doc.
func (w *world) delivered(doc string) int {
	n := 0
	for _, d := range w.p.AllDeliveries() {
		if d.DocumentID == doc {
			n++
		}
	}
	return n
}

// keysFor returns the keys of every Send of doc, in order.
func (w *world) keysFor(doc string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var keys []string
	for _, s := range w.sends {
		if s.doc == doc {
			keys = append(keys, s.key)
		}
	}
	return keys
}

// result is what one side of a race got.
type result struct {
	ok    bool
	err   error
	lease task.JobLease
}

// race runs a on process pa and b on process pb so that they overlap, and
// calls check with what each got. On memory they run from two goroutines
// at once, rounds times, each round on a fresh store built by setup. On
// Redis the suite holds a's k-th command back until b has returned, for k
// = 1, 2, ... until a needs fewer than k commands: every point at which a
// multi-command operation could be interleaved is tried.
func (w *world) race(o Options, rounds int, setup func(st *store) (pa, pb *proc), a, b func(p *proc) result, check func(st *store, ra, rb result)) {
	w.t.Helper()
	if w.kind == memoryKind {
		for range rounds {
			st := w.newStore(o)
			pa, pb := setup(st)
			var ra, rb result
			start := make(chan struct{})
			ca := suites.Go(func() { suites.Guard(w.t, func() { <-start; ra = a(pa) }) })
			cb := suites.Go(func() { suites.Guard(w.t, func() { <-start; rb = b(pb) }) })
			close(start)
			ca.Wait()
			cb.Wait()
			check(st, ra, rb)
			if w.t.Failed() {
				return
			}
		}
		return
	}
	for k := int64(1); k <= 16; k++ {
		st := w.newStore(o)
		pa, pb := setup(st)
		reached, release := make(chan struct{}), make(chan struct{})
		target := pa.hk.sent.Load() + k
		gate := func(n int64) {
			if n == target {
				close(reached)
				<-release
			}
		}
		pa.hk.gate.Store(&gate)
		var ra, rb result
		ca := suites.Go(func() { suites.Guard(w.t, func() { ra = a(pa) }) })
		held := false
		select {
		case <-reached:
			held = true
			w.h.Note("%s's command %d is held back while %s runs", pa.name, k, pb.name)
		case <-ca.Done():
		}
		rb = b(pb)
		if held {
			close(release)
		}
		ca.Wait()
		pa.hk.gate.Store(nil)
		check(st, ra, rb)
		if w.t.Failed() || !held {
			return
		}
	}
}
