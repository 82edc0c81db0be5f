package engineview_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/ops/engineview"
	"github.com/fourth-outcome/labkit/redisaddr"
	"github.com/fourth-outcome/labkit/redisaddr/redisclient"
	engine "github.com/fourth-outcome/labkit/solutions/10-engine"
)

// t0 is the scenario's first instant.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// clock is a clock moved by hand, shared by the engine and the monitor.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t0.Add(d)
}

// servers runs f once on miniredis and once on the real redis-server named
// by REDIS_ADDR (skipped when it is not set), each with a namespace of its
// own.
func servers(t *testing.T, f func(t *testing.T, rdb goredis.UniversalClient, ns string)) {
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		rdb := goredis.NewClient(&goredis.Options{Addr: m.Addr()})
		t.Cleanup(func() { rdb.Close() })
		f(t, rdb, "labkit:test:ops")
	})
	t.Run("redis-server", func(t *testing.T) {
		addr := os.Getenv(redisaddr.Env)
		if addr == "" {
			t.Skip("REDIS_ADDR is not set: no real redis-server to run against")
		}
		rdb := realRedis(t, addr)
		f(t, rdb, fmt.Sprintf("labkit:test:ops:%d", time.Now().UnixNano()))
	})
}

// realRedis connects to addr and deletes the test's namespaces at the end.
func realRedis(tb testing.TB, addr string) *goredis.Client {
	tb.Helper()
	o, err := redisclient.Options(addr)
	if err != nil {
		tb.Fatalf("REDIS_ADDR: %v", err)
	}
	rdb := goredis.NewClient(o)
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		tb.Fatalf("REDIS_ADDR %s: %v", addr, err)
	}
	tb.Cleanup(func() {
		keys, _ := rdb.Keys(ctx, "labkit:test:ops:*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
		rdb.Close()
	})
	return rdb
}

// world is the scenario's engine, its clock and a monitor of it.
type world struct {
	tb  testing.TB
	ctx context.Context
	clk *clock
	b   *engine.Redis
}

func newWorld(tb testing.TB, rdb goredis.UniversalClient, ns string) *world {
	tb.Helper()
	clk := &clock{now: t0}
	b, err := engine.NewRedis(rdb, ns, engine.Options{
		VisibilityTimeout: 10 * time.Second, MaxDeliveries: 2,
		BaseBackoff: 5 * time.Second, MaxBackoff: time.Minute, Now: clk.Now,
	})
	if err != nil {
		tb.Fatalf("NewRedis: %v", err)
	}
	return &world{tb: tb, ctx: context.Background(), clk: clk, b: b}
}

func (w *world) submit(id string) {
	w.tb.Helper()
	ok, err := w.b.Submit(w.ctx, engine.Job{ID: id, Account: "acct", Steps: []engine.Step{{DocumentID: "doc-" + id, Recipient: id + "@example.com"}}})
	if err != nil || !ok {
		w.tb.Fatalf("Submit(%s) = %v, %v; want true, nil", id, ok, err)
	}
}

func (w *world) lease(worker, want string) engine.Lease {
	w.tb.Helper()
	l, err := w.b.Lease(w.ctx, worker)
	if err != nil || l.Job.ID != want {
		w.tb.Fatalf("Lease(%s) = %q, %v; want job %q", worker, l.Job.ID, err, want)
	}
	return l
}

func (w *world) complete(l engine.Lease) {
	w.tb.Helper()
	if err := w.b.Complete(w.ctx, l); err != nil {
		w.tb.Fatalf("Complete(%s) = %v", l.Job.ID, err)
	}
}

func (w *world) fail(l engine.Lease, cause error) {
	w.tb.Helper()
	if err := w.b.Fail(w.ctx, l, cause); err != nil {
		w.tb.Fatalf("Fail(%s) = %v", l.Job.ID, err)
	}
}

var (
	errInvalid = fmt.Errorf("%w: step 0: invalid recipient", engine.ErrPermanent)
	errOutage  = errors.New("step 0: provider unavailable")
)

// play runs the scenario up to t0+12s: eight jobs, one done, one dead for
// good, one dead after its two deliveries, two leases ended (crashed
// workers), one lease held, one job in backoff and one waiting.
func (w *world) play() {
	w.tb.Helper()
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		w.submit(id)
	}
	w.complete(w.lease("w1", "a"))         // token 1
	w.fail(w.lease("w2", "b"), errInvalid) // token 2: dead, permanent failure
	w.fail(w.lease("w3", "c"), errOutage)  // token 3: queued until +5s
	w.lease("w1", "d")                     // token 4, until +10s, then w1 crashes
	w.lease("w2", "e")                     // token 5, until +10s, then w2 crashes
	w.clk.Set(5 * time.Second)             //
	w.lease("w3", "f")                     // token 6, until +15s
	w.clk.Set(8 * time.Second)             //
	w.fail(w.lease("w3", "g"), errOutage)  // token 7: queued until +13s
	w.fail(w.lease("w3", "c"), errOutage)  // token 8: delivery 2 of 2: dead, max deliveries
	w.clk.Set(9 * time.Second)             //
	w.submit("h")                          // queued, visible from +9s
	w.clk.Set(12 * time.Second)            //
}

// wantAt12s is what Read must say at t0+12s.
func wantAt12s(ns string) engineview.Status {
	return engineview.Status{
		Namespace: ns, Now: t0.Add(12 * time.Second),
		Jobs: 8, Queued: 2, Backoff: 1, Leased: 3, LeasesEnded: 2, Done: 1, Dead: 2,
		Visible: 3, OldestVisibleAge: 3 * time.Second,
		Deliveries: 8, Token: 8,
		ByDeliveries: []engineview.DeliveryCount{{Deliveries: 0, Jobs: 1}, {Deliveries: 1, Jobs: 4}},
		Leases: []engineview.Lease{
			{JobID: "d", Token: 4, Delivery: 1, Left: -2 * time.Second},
			{JobID: "e", Token: 5, Delivery: 1, Left: -2 * time.Second},
			{JobID: "f", Token: 6, Delivery: 1, Left: 3 * time.Second},
		},
		DeadReasons: []engineview.ReasonCount{{Reason: "max deliveries", Jobs: 1}, {Reason: "permanent failure", Jobs: 1}},
		DeadLetters: []engineview.DeadLetter{
			{JobID: "b", Reason: "permanent failure", LastError: errInvalid.Error(), Deliveries: 1},
			{JobID: "c", Reason: "max deliveries", LastError: errOutage.Error(), Deliveries: 2},
		},
	}
}

func TestReadCountsWhatTheEngineDid(t *testing.T) {
	servers(t, func(t *testing.T, rdb goredis.UniversalClient, ns string) {
		w := newWorld(t, rdb, ns)
		w.play()
		got, err := engineview.ReadAt(context.Background(), rdb, ns, w.clk.Now())
		if err != nil {
			t.Fatalf("Read(%s): %v", ns, err)
		}
		want := wantAt12s(ns)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Read(%s) differs from what the engine did (-want +got):\n%s", ns, diff)
		}
		if got.Queued != want.Queued {
			t.Errorf("Read(%s).Queued = %d, want %d", ns, got.Queued, want.Queued)
		}
	})
}

func TestReadOfAnEmptyNamespace(t *testing.T) {
	servers(t, func(t *testing.T, rdb goredis.UniversalClient, ns string) {
		got, err := engineview.ReadAt(context.Background(), rdb, ns, t0)
		if err != nil {
			t.Fatalf("Read(%s): %v", ns, err)
		}
		want := engineview.Status{Namespace: ns, Now: t0}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Read(%s) of nothing (-want +got):\n%s", ns, diff)
		}
	})
}

// TestReadKeepsToItsNamespace: a namespace that is a glob pattern, or a
// prefix of another namespace, reads only its own jobs.
func TestReadKeepsToItsNamespace(t *testing.T) {
	servers(t, func(t *testing.T, rdb goredis.UniversalClient, ns string) {
		w := newWorld(t, rdb, ns+":*")
		w.submit("x")
		other := newWorld(t, rdb, ns+":a")
		other.submit("y")
		got, err := engineview.ReadAt(context.Background(), rdb, ns+":*", t0)
		if err != nil {
			t.Fatalf("Read(%s): %v", ns+":*", err)
		}
		if got.Jobs != 1 || got.Queued != 1 {
			t.Errorf("Read(%s).Jobs, Queued = %d, %d, want 1, 1 (its own job only)", ns+":*", got.Jobs, got.Queued)
		}
	})
}

func TestReadRefusesAnEmptyNamespace(t *testing.T) {
	rdb := goredis.NewClient(&goredis.Options{Addr: miniredis.RunT(t).Addr()})
	defer rdb.Close()
	if _, err := engineview.Read(context.Background(), rdb, ""); err == nil || !strings.Contains(err.Error(), "empty namespace") {
		t.Errorf("Read(\"\") = %v, want an error naming the empty namespace", err)
	}
}

func TestReadReturnsRedisErrors(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: m.Addr(), MaxRetries: -1})
	defer rdb.Close()
	m.Close()
	if _, err := engineview.Read(context.Background(), rdb, "ns"); err == nil {
		t.Errorf("Read(ns) on a closed server = nil error, want the connection's error")
	}
}

// TestMonitorAndMetrics: the monitor's estimate and latency, and the
// /metrics text, match what the engine did.
func TestMonitorAndMetrics(t *testing.T) {
	servers(t, func(t *testing.T, rdb goredis.UniversalClient, ns string) {
		w := newWorld(t, rdb, ns)
		m, err := engineview.NewMonitor(rdb, ns, engineview.MonitorOptions{Window: 2 * time.Second, Now: w.clk.Now})
		if err != nil {
			t.Fatalf("NewMonitor: %v", err)
		}
		ctx := context.Background()
		if _, err := m.Poll(ctx); err != nil { // at t0: nothing yet
			t.Fatalf("Poll at t0: %v", err)
		}
		w.play()
		got, err := m.Poll(ctx)
		if err != nil {
			t.Fatalf("Poll at +12s: %v", err)
		}
		// 8 jobs in, 3 out, in 12 s: the backlog of 5 never drains.
		arrival, finish := 8.0/12, 3.0/12
		wantDrain := engineview.Estimate{Window: 12 * time.Second, Arrival: arrival, Finish: finish, Backlog: 5, Growth: arrival - finish, Never: true}
		if diff := cmp.Diff(wantDrain, got.Drain); diff != "" {
			t.Errorf("Poll(%s).Drain at +12s (-want +got):\n%s", ns, diff)
		}
		want := wantAt12s(ns)
		want.Drain = wantDrain
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Poll(%s) at +12s differs from Read (-want +got):\n%s", ns, diff)
		}

		w.clk.Set(13 * time.Second)
		w.complete(w.lease("w1", "h")) // submitted at +9s, seen waiting: 5 s at the next read
		fLease := engine.Lease{Job: engine.Job{ID: "f", Account: "acct", Steps: []engine.Step{{DocumentID: "doc-f", Recipient: "f@example.com"}}}, Token: 6}
		w.complete(fLease) // first seen leased at +12s: 2 s at the next read
		w.clk.Set(14 * time.Second)

		// The scrape is the monitor's third read: over the last 2 s, no
		// arrival and 2 finished, so the backlog of 3 drains in 3 s.
		want14 := `
# HELP labkit_engine_backoff_jobs Queued jobs still waiting out a backoff.
# TYPE labkit_engine_backoff_jobs gauge
labkit_engine_backoff_jobs{engine_namespace="NS"} 0
# HELP labkit_engine_completion_latency_seconds Time from a job's submission to the read that first saw it done (exact submission time when the monitor saw the job before its first lease, else when it first saw it; a read interval's resolution).
# TYPE labkit_engine_completion_latency_seconds histogram
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="0.1"} 0
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="0.25"} 0
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="0.5"} 0
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="1"} 0
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="2.5"} 1
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="5"} 2
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="10"} 2
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="30"} 2
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="60"} 2
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="120"} 2
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="300"} 2
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="600"} 2
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="1800"} 2
labkit_engine_completion_latency_seconds_bucket{engine_namespace="NS",le="+Inf"} 2
labkit_engine_completion_latency_seconds_sum{engine_namespace="NS"} 7
labkit_engine_completion_latency_seconds_count{engine_namespace="NS"} 2
# HELP labkit_engine_completions_total Jobs done.
# TYPE labkit_engine_completions_total counter
labkit_engine_completions_total{engine_namespace="NS"} 3
# HELP labkit_engine_dead_letters_total Jobs dead-lettered, by reason.
# TYPE labkit_engine_dead_letters_total counter
labkit_engine_dead_letters_total{engine_namespace="NS",reason="max deliveries"} 1
labkit_engine_dead_letters_total{engine_namespace="NS",reason="permanent failure"} 1
# HELP labkit_engine_deliveries_total Deliveries (leases granted) of every job.
# TYPE labkit_engine_deliveries_total counter
labkit_engine_deliveries_total{engine_namespace="NS"} 9
# HELP labkit_engine_drain_estimate_seconds Time to drain the backlog by lab 09's arithmetic over the monitor's window; +Inf when jobs do not finish faster than they arrive (never). Absent until two reads.
# TYPE labkit_engine_drain_estimate_seconds gauge
labkit_engine_drain_estimate_seconds{engine_namespace="NS"} 3
# HELP labkit_engine_arrival_rate Jobs submitted per second over the monitor's window. Absent until two reads.
# TYPE labkit_engine_arrival_rate gauge
labkit_engine_arrival_rate{engine_namespace="NS"} 0
# HELP labkit_engine_finish_rate Jobs completed or dead-lettered per second over the monitor's window. Absent until two reads.
# TYPE labkit_engine_finish_rate gauge
labkit_engine_finish_rate{engine_namespace="NS"} 1
# HELP labkit_engine_ended_leases Leased jobs whose lease ended without an outcome: visible again, or dead at the next lease on their last delivery.
# TYPE labkit_engine_ended_leases gauge
labkit_engine_ended_leases{engine_namespace="NS"} 2
# HELP labkit_engine_leased_jobs Jobs whose state is leased, as the engine holds them (ended leases included).
# TYPE labkit_engine_leased_jobs gauge
labkit_engine_leased_jobs{engine_namespace="NS"} 2
# HELP labkit_engine_leases Leases held, by worker ("" when the layout does not record it).
# TYPE labkit_engine_leases gauge
labkit_engine_leases{engine_namespace="NS",worker=""} 2
# HELP labkit_engine_oldest_visible_job_age_seconds How long the job visible longest has been visible; 0 when none is.
# TYPE labkit_engine_oldest_visible_job_age_seconds gauge
labkit_engine_oldest_visible_job_age_seconds{engine_namespace="NS"} 4
# HELP labkit_engine_queued_jobs Jobs whose state is queued (waiting for a lease, or out their backoff).
# TYPE labkit_engine_queued_jobs gauge
labkit_engine_queued_jobs{engine_namespace="NS"} 1
# HELP labkit_engine_submitted_jobs_total Jobs stored (every job record of the namespace).
# TYPE labkit_engine_submitted_jobs_total counter
labkit_engine_submitted_jobs_total{engine_namespace="NS"} 8
# HELP labkit_engine_unfinished_jobs_by_deliveries Unfinished jobs by how many deliveries each has had.
# TYPE labkit_engine_unfinished_jobs_by_deliveries gauge
labkit_engine_unfinished_jobs_by_deliveries{deliveries="1",engine_namespace="NS"} 3
# HELP labkit_engine_up 1 when the last read of the namespace succeeded, 0 when it failed.
# TYPE labkit_engine_up gauge
labkit_engine_up{engine_namespace="NS"} 1
# HELP labkit_engine_visible_jobs Unfinished jobs a lease could take now.
# TYPE labkit_engine_visible_jobs gauge
labkit_engine_visible_jobs{engine_namespace="NS"} 3
`
		c := engineview.NewCollector(m, 0)
		if err := testutil.CollectAndCompare(c, strings.NewReader(strings.ReplaceAll(want14, "NS", ns))); err != nil {
			t.Errorf("/metrics of %s at +14s differs from what the engine did:\n%v", ns, err)
		}
	})
}

func TestForecast(t *testing.T) {
	for _, tc := range []struct {
		backlog         int
		arrival, finish float64
		want            engineview.Estimate
	}{
		// Lab 09's example: 12,000 jobs, 80 in and 100 out a second.
		{12000, 80, 100, engineview.Estimate{Arrival: 80, Finish: 100, Backlog: 12000, Growth: -20, Drain: 10 * time.Minute}},
		{12000, 100, 100, engineview.Estimate{Arrival: 100, Finish: 100, Backlog: 12000, Growth: 0, Never: true}},
		{12000, 120, 100, engineview.Estimate{Arrival: 120, Finish: 100, Backlog: 12000, Growth: 20, Never: true}},
		{0, 120, 100, engineview.Estimate{Arrival: 120, Finish: 100, Growth: 20}},
		{1, 0, 1e-300, engineview.Estimate{Finish: 1e-300, Backlog: 1, Growth: -1e-300, Drain: time.Duration(1<<63 - 1)}},
	} {
		got := engineview.Forecast(tc.backlog, tc.arrival, tc.finish)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Forecast(%d, %v, %v) (-want +got):\n%s", tc.backlog, tc.arrival, tc.finish, diff)
		}
	}
}

func TestFormat(t *testing.T) {
	s := wantAt12s("labkit:test:ops")
	s.Drain = engineview.Forecast(5, 0.5, 1)
	s.Drain.Window = time.Minute
	var b strings.Builder
	if err := s.Format(&b); err != nil {
		t.Fatalf("Format: %v", err)
	}
	want := `engine      labkit:test:ops at 2026-01-02T03:04:17Z
jobs        8 submitted: 2 queued (1 in backoff), 3 leased (2 ended), 1 done, 2 dead
visible     3, the oldest visible for 3s
deliveries  8 in all, last token 8
unfinished  by delivery count: 1 job after 0, 4 jobs after 1
drain       10s for 5 unfinished (0.50/s in, 1.00/s finished over 1m0s)

leases by worker  job  token  delivery  step  time left
  (not recorded)  d    4      1         0     ended 2s ago
  (not recorded)  e    5      1         0     ended 2s ago
  (not recorded)  f    6      1         0     3s

dead letters: 1 max deliveries, 1 permanent failure
  job  reason             deliveries  last error
  b    permanent failure  1           permanent failure: step 0: invalid recipient
  c    max deliveries     2           step 0: provider unavailable
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("Format (-want +got):\n%s", diff)
	}
}

// TestReadIsOfTheLayoutNotTheCode: hashes written by hand in the layout (a
// student's backend that keeps it) are read the same, and a worker field,
// which the reference engine does not write, names the lease's holder.
func TestReadIsOfTheLayoutNotTheCode(t *testing.T) {
	servers(t, func(t *testing.T, rdb goredis.UniversalClient, ns string) {
		ctx := context.Background()
		until := t0.Add(7 * time.Second).UnixMilli()
		rdb.HSet(ctx, ns+":job:x", "job", "{}", "state", "leased", "deliveries", 2, "step", 1, "token", 9, "until", until, "worker", "w7")
		rdb.HSet(ctx, ns+":job:y", "job", "{}", "state", "queued", "deliveries", 0, "step", 0, "token", 0, "until", t0.UnixMilli())
		rdb.Set(ctx, ns+":token", 9, 0)
		rdb.ZAdd(ctx, ns+":due", goredis.Z{Score: float64(until), Member: "x"}, goredis.Z{Score: float64(t0.UnixMilli()), Member: "y"})
		rdb.Set(ctx, ns+":job:not-a-hash", "v", 0)
		got, err := engineview.ReadAt(ctx, rdb, ns, t0.Add(time.Second))
		if err != nil {
			t.Fatalf("Read(%s): %v", ns, err)
		}
		want := engineview.Status{
			Namespace: ns, Now: t0.Add(time.Second),
			Jobs: 2, Queued: 1, Leased: 1, Visible: 1, OldestVisibleAge: time.Second,
			Deliveries: 2, Token: 9,
			ByDeliveries: []engineview.DeliveryCount{{Deliveries: 0, Jobs: 1}, {Deliveries: 2, Jobs: 1}},
			Leases:       []engineview.Lease{{JobID: "x", Worker: "w7", Token: 9, Delivery: 2, Step: 1, Left: 6 * time.Second}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Read(%s) of a hand-written layout (-want +got):\n%s", ns, diff)
		}
	})
}

func TestFormatOfAnEmptyNamespaceSaysSo(t *testing.T) {
	var b strings.Builder
	if err := (engineview.Status{Namespace: "labkit:dmeo", Now: t0}).Format(&b); err != nil {
		t.Fatalf("Format: %v", err)
	}
	if want := "jobs        none: no job record under labkit:dmeo:job: (is the namespace right?)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("Format of an empty namespace:\n%s\nwant the line %q", b.String(), want)
	}
}

func TestCollectorSaysDownWhenRedisIs(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: m.Addr(), MaxRetries: -1})
	defer rdb.Close()
	mon, err := engineview.NewMonitor(rdb, "ns", engineview.MonitorOptions{})
	if err != nil {
		t.Fatalf("NewMonitor: %v", err)
	}
	m.Close()
	want := `
# HELP labkit_engine_up 1 when the last read of the namespace succeeded, 0 when it failed.
# TYPE labkit_engine_up gauge
labkit_engine_up{engine_namespace="ns"} 0
`
	if err := testutil.CollectAndCompare(engineview.NewCollector(mon, time.Second), strings.NewReader(want), "labkit_engine_up"); err != nil {
		t.Errorf("/metrics with Redis down: %v", err)
	}
}
