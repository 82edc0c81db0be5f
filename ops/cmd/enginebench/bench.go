package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/ops/opscmd"
	"github.com/fourth-outcome/labkit/redisaddr"
)

// system is one of the two queues under test.
type system interface {
	// name is how the tables call it.
	name() string
	// reset deletes the system's keys.
	reset(ctx context.Context) error
	// submit submits job i of a run (IDs from jobID) and records its
	// submission in r.
	submit(ctx context.Context, r *recorder, i int) error
	// work runs workers until r has seen every job done, or ctx ends; stop
	// stops them (after the bench has read Redis's counters).
	work(ctx context.Context, r *recorder) (stop func(), err error)
	// sent is the number of commands the system's client has sent so far.
	sent() int64
}

// jobID is the ID of job i.
func jobID(i int) string { return fmt.Sprintf("job-%06d", i) }

// jobIndex parses a jobID back, or returns -1.
func jobIndex(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "job-"))
	if err != nil || !strings.HasPrefix(id, "job-") {
		return -1
	}
	return n
}

// recorder keeps one run's submission and done times.
type recorder struct {
	submitted []time.Time
	mu        sync.Mutex
	doneAt    []time.Time
	left      int
	all       chan struct{} // closed when every job is done
}

// newRecorder returns the recorder of a run of jobs jobs.
func newRecorder(jobs int) *recorder {
	return &recorder{submitted: make([]time.Time, jobs), doneAt: make([]time.Time, jobs), left: jobs, all: make(chan struct{})}
}

// done records job id done now (once; a second report is ignored).
func (r *recorder) done(id string) {
	now := time.Now()
	i := jobIndex(id)
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < 0 || i >= len(r.doneAt) || !r.doneAt[i].IsZero() {
		return
	}
	r.doneAt[i] = now
	r.left--
	if r.left == 0 {
		close(r.all)
	}
}

// remaining is how many jobs are not done yet.
func (r *recorder) remaining() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.left
}

// result is one run of one system.
type result struct {
	wall         time.Duration // from the workers' start to the last job done
	perSec       float64
	p50, p99     time.Duration
	cmds, sent   float64 // per job; cmds is NaN when the server does not say
	submitPerSec float64
}

// runOnce runs one system once: reset, submit every job, then work until
// all are done.
func runOnce(ctx context.Context, rdb *goredis.Client, s system, jobs int, timeout time.Duration) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := s.reset(ctx); err != nil {
		return result{}, fmt.Errorf("%s: reset: %w", s.name(), err)
	}
	rec := newRecorder(jobs)
	before, haveCmds := commandsProcessed(ctx, rdb)
	sentBefore := s.sent()
	start := time.Now()
	for i := range jobs {
		rec.submitted[i] = time.Now()
		if err := s.submit(ctx, rec, i); err != nil {
			return result{}, fmt.Errorf("%s: submit %s: %w", s.name(), jobID(i), err)
		}
	}
	submitted := time.Since(start)
	workStart := time.Now()
	stop, err := s.work(ctx, rec)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", s.name(), err)
	}
	sentAfter := s.sent()
	after, haveAfter := commandsProcessed(ctx, rdb)
	stop()

	last := workStart
	lat := make([]time.Duration, jobs)
	for i := range jobs {
		last = maxTime(last, rec.doneAt[i])
		lat[i] = rec.doneAt[i].Sub(rec.submitted[i])
	}
	slices.Sort(lat)
	res := result{
		wall:         last.Sub(workStart),
		p50:          percentile(lat, 0.50),
		p99:          percentile(lat, 0.99),
		sent:         float64(sentAfter-sentBefore) / float64(jobs),
		cmds:         math.NaN(),
		submitPerSec: float64(jobs) / submitted.Seconds(),
	}
	res.perSec = float64(jobs) / res.wall.Seconds()
	if haveCmds && haveAfter {
		// The first INFO counts itself once it has answered; the second
		// does not yet: the delta holds one INFO of the bench's own.
		res.cmds = float64(after-before-1) / float64(jobs)
	}
	return res, nil
}

// maxTime is the later of a and b.
func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// percentile is the nearest-rank p-th percentile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}

// commandsProcessed reads the server's total_commands_processed; false
// when the server does not report it (miniredis).
func commandsProcessed(ctx context.Context, rdb *goredis.Client) (int64, bool) {
	info, err := rdb.Info(ctx, "stats").Result()
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// serverVersion is the server's redis_version, or "unknown".
func serverVersion(ctx context.Context, rdb *goredis.Client) string {
	info, err := rdb.Info(ctx, "server").Result()
	if err == nil {
		for line := range strings.SplitSeq(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
				return v
			}
		}
	}
	return "unknown"
}

// deleteMatching deletes every key matching the SCAN pattern.
func deleteMatching(ctx context.Context, rdb *goredis.Client, pattern string) error {
	var keys []string
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("scan %s: %w", pattern, err)
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := rdb.Del(ctx, keys[:n]...).Err(); err != nil {
			return fmt.Errorf("delete %s: %w", pattern, err)
		}
		keys = keys[n:]
	}
	return nil
}

// globEscape escapes SCAN's pattern characters, so that a prefix matches
// only itself.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\', '^', '-':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// counter is a go-redis hook that counts the commands a client sends and
// shows each successful one to an observer.
type counter struct {
	n       atomic.Int64
	observe atomic.Pointer[func(goredis.Cmder)]
}

// DialHook leaves dialing alone.
func (c *counter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

// ProcessHook counts a command and shows it to the observer once it succeeded.
func (c *counter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		c.n.Add(1)
		err := next(ctx, cmd)
		if f := c.observe.Load(); f != nil && err == nil {
			(*f)(cmd)
		}
		return err
	}
}

// ProcessPipelineHook counts a pipeline's commands.
func (c *counter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// run runs the bench with the command line args (without the program name).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stdout)
	if err != nil {
		return err
	}
	// One client to read INFO, one per system: each system's own commands
	// are counted apart.
	rdb, ro, err := opscmd.DialRedis(ctx, o.redis)
	if err != nil {
		return err
	}
	defer rdb.Close()
	var systems []system
	if o.only != "asynq" {
		c, err := newEngineSystem(ro, o)
		if err != nil {
			return err
		}
		defer c.close()
		systems = append(systems, c)
	}
	if o.only != "engine" {
		a := newAsynqSystem(ro, o)
		defer a.close()
		systems = append(systems, a)
	}
	fmt.Fprintf(stdout, "enginebench: %d jobs (one no-op step each) x %d runs, %d workers, Redis %s %s, %s\n",
		o.jobs, o.runs, o.workers, serverVersion(ctx, rdb), redisaddr.Describe(o.redis), time.Now().UTC().Format(time.RFC3339))
	results := make([][]result, len(systems))
	for r := 1; r <= o.runs; r++ {
		for i, s := range systems { // interleaved, so that a slow spell of the machine hits both
			res, err := runOnce(ctx, rdb, s, o.jobs, o.timeout)
			if err != nil {
				return fmt.Errorf("run %d: %w", r, err)
			}
			results[i] = append(results[i], res)
			fmt.Fprintf(stdout, "  run %d %-6s %8.0f jobs/s  p50 %-9s p99 %-9s %s commands/job (%.2f sent)  submit %.0f jobs/s\n",
				r, s.name(), res.perSec, round(res.p50), round(res.p99), fmtCmds(res.cmds), res.sent, res.submitPerSec)
		}
	}
	fmt.Fprintf(stdout, "\nmedians of %d runs:\n", o.runs)
	fmt.Fprintf(stdout, "  %-7s %10s %10s %10s %14s %10s\n", "system", "jobs/s", "p50", "p99", "commands/job", "sent/job")
	meds := make([]result, len(systems))
	for i, s := range systems {
		meds[i] = median(results[i])
		m := meds[i]
		fmt.Fprintf(stdout, "  %-7s %10.0f %10s %10s %14s %10.2f\n", s.name(), m.perSec, round(m.p50), round(m.p99), fmtCmds(m.cmds), m.sent)
	}
	if len(systems) == 2 {
		e, a := meds[0], meds[1]
		fmt.Fprintf(stdout, "\nengine/asynq: throughput %.2fx (goal >= 1.0x), p50 latency %.2fx, p99 latency %.2fx, commands/job %sx, sent/job %.2fx\n",
			e.perSec/a.perSec, e.p50.Seconds()/a.p50.Seconds(), e.p99.Seconds()/a.p99.Seconds(), fmtRatio(e.cmds/a.cmds), e.sent/a.sent)
		fmt.Fprintln(stdout, "(throughput above 1 favours the engine; latency and commands below 1 do)")
	}
	return nil
}

// median is the per-figure median of runs (each figure on its own).
func median(rs []result) result {
	pick := func(f func(result) float64) float64 {
		v := make([]float64, 0, len(rs))
		for _, r := range rs {
			v = append(v, f(r))
		}
		slices.Sort(v)
		n := len(v)
		if n%2 == 1 {
			return v[n/2]
		}
		return (v[n/2-1] + v[n/2]) / 2
	}
	return result{
		perSec: pick(func(r result) float64 { return r.perSec }),
		p50:    time.Duration(pick(func(r result) float64 { return float64(r.p50) })),
		p99:    time.Duration(pick(func(r result) float64 { return float64(r.p99) })),
		cmds:   pick(func(r result) float64 { return r.cmds }),
		sent:   pick(func(r result) float64 { return r.sent }),
	}
}

// round shortens d for a table.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// fmtCmds formats commands per job, n/a when the server did not say.
func fmtCmds(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// fmtRatio formats a ratio, n/a when it is not a number.
func fmtRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
