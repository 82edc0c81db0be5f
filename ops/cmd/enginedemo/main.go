// Command enginedemo runs the reference lab-10 engine (solutions/10-engine)
// on Redis with N workers against the fake signing provider with faults:
// lost replies, failures before commit, slow calls, workers that crash
// holding a lease, and jobs whose recipient is invalid. It gives `engine
// status` and `engine metrics` something to watch.
//
// It imports the reference solution, so it builds only in the full kit: a
// student release has no solutions/ and so no demo (labctl engine demo
// says so). Run from ops/:
//
//	go run ./cmd/enginedemo --redis 127.0.0.1:6379 --workers 3
//	go run ./cmd/engine status --redis 127.0.0.1:6379 --watch   # in another terminal
//
// Without --redis it starts an embedded Redis (miniredis) and prints its
// address. It writes only keys under --namespace, refuses a namespace that
// already holds keys unless --reset deletes them first, and stops when
// every job it submitted is done or dead, at --duration, or when
// interrupted. Exit status: 0 done, 1 an error, 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/ops/engineview"
	"github.com/fourth-outcome/labkit/ops/opscmd"
	"github.com/fourth-outcome/labkit/provider"
	"github.com/fourth-outcome/labkit/rubric"
	engine "github.com/fourth-outcome/labkit/solutions/10-engine"
)

func main() { opscmd.Main("enginedemo", run) }

// options are the demo's flags.
type options struct {
	redis, namespace string
	reset            bool
	workers, jobs    int
	steps            int
	rate             float64
	stepTime         time.Duration
	duration         time.Duration
	faults, crash    float64
	invalid          float64
	seed             int64
	engine           engine.Options
}

const help = `enginedemo runs the reference lab-10 engine on Redis with faulty workers and
a faulty provider, so that "engine status" and "engine metrics" have
something to watch. Full kit only: it imports solutions/10-engine.

Usage: enginedemo [flags]
`

// parse parses the command line into options, with one-line errors; --help
// prints the usage on stdout.
func parse(args []string, stdout io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("enginedemo", flag.ContinueOnError)
	fs.StringVar(&o.redis, "redis", "", "the Redis server, host:port or redis://host:port/db (default: an embedded Redis, whose address is printed)")
	fs.StringVar(&o.namespace, "namespace", "labkit:demo", "the namespace of the engine's keys")
	fs.BoolVar(&o.reset, "reset", false, "delete the namespace's keys first (without it, a namespace that holds keys is refused)")
	fs.IntVar(&o.workers, "workers", 3, "workers leasing jobs concurrently")
	fs.IntVar(&o.jobs, "jobs", 120, "jobs to submit (0: until --duration or an interrupt)")
	fs.IntVar(&o.steps, "steps", 3, "signing requests per job")
	fs.Float64Var(&o.rate, "rate", 2.5, "jobs submitted per second")
	fs.DurationVar(&o.stepTime, "step-time", 250*time.Millisecond, "a worker's own time per step, before its provider call")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (0: when every job is done or dead)")
	fs.Float64Var(&o.faults, "faults", 0.15, "probability of a provider fault per call (failure before commit, lost reply or slow call)")
	fs.Float64Var(&o.crash, "crash", 0.05, "probability that a worker crashes holding a lease (the lease then ends by itself)")
	fs.Float64Var(&o.invalid, "invalid", 0.05, "fraction of jobs whose last recipient is invalid (dead-lettered for good)")
	fs.Int64Var(&o.seed, "seed", 1, "seed of every random draw")
	fs.DurationVar(&o.engine.VisibilityTimeout, "visibility", 5*time.Second, "the engine's visibility timeout")
	fs.IntVar(&o.engine.MaxDeliveries, "max-deliveries", 4, "the engine's deliveries before a dead letter")
	fs.IntVar(&o.engine.Capacity, "capacity", 100, "the engine's capacity (unfinished jobs)")
	fs.DurationVar(&o.engine.BaseBackoff, "backoff", 500*time.Millisecond, "the engine's first backoff")
	if err := opscmd.Parse(fs, args, help, stdout); err != nil {
		return o, err
	}
	switch {
	case o.namespace == "":
		return o, opscmd.Usagef("--namespace is empty")
	case o.workers < 1:
		return o, opscmd.Usagef("--workers %d: want at least 1", o.workers)
	case o.jobs < 0 || o.steps < 1:
		return o, opscmd.Usagef("--jobs %d --steps %d: want jobs >= 0 and steps >= 1", o.jobs, o.steps)
	case !(o.rate > 0) || o.rate > 1e6:
		return o, opscmd.Usagef("--rate %v: want a positive rate per second", o.rate)
	case o.stepTime < 0 || o.duration < 0:
		return o, opscmd.Usagef("--step-time and --duration must not be negative")
	case !prob(o.faults) || !prob(o.crash) || !prob(o.invalid):
		return o, opscmd.Usagef("--faults %v --crash %v --invalid %v: want probabilities in [0, 1]", o.faults, o.crash, o.invalid)
	case o.jobs == 0 && o.duration == 0:
		return o, opscmd.Usagef("--jobs 0 runs for ever: give --duration too, or interrupt it (--duration 1h)")
	}
	return o, nil
}

// prob reports whether p is a probability.
func prob(p float64) bool { return p >= 0 && p <= 1 }

// run runs the demo with the command line args (without the program name).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stdout)
	if err != nil {
		return err
	}
	addr := o.redis
	if addr == "" {
		m, err := miniredis.Run()
		if err != nil {
			return fmt.Errorf("embedded Redis: %w", err)
		}
		defer m.Close()
		addr = m.Addr()
	}
	rdb, _, err := opscmd.DialRedis(ctx, addr)
	if err != nil {
		return err
	}
	defer rdb.Close()
	if err := prepare(ctx, rdb, o); err != nil {
		return err
	}
	b, err := engine.NewRedis(rdb, o.namespace, o.engine)
	if err != nil {
		return opscmd.Usagef("%v", err)
	}
	jobs := fmt.Sprintf("%d jobs", o.jobs)
	if o.jobs == 0 {
		jobs = "jobs for " + o.duration.String()
	}
	fmt.Fprintf(stdout, "enginedemo: the reference engine on Redis %s, namespace %s, %d workers, %s at %.1f/s (seed %d)\n",
		addr, o.namespace, o.workers, jobs, o.rate, o.seed)
	watch := "go -C ops run ./cmd/engine" // from the kit's root
	if prog := os.Getenv(rubric.ProgEnv); prog != "" {
		watch = prog + " engine" // run by labctl engine demo
	}
	fmt.Fprintf(stdout, "enginedemo: watch it with: %s status --redis %s --namespace %s --watch\n", watch, addr, o.namespace)

	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	p := provider.New(provider.Options{ResponseTimeout: time.Second})
	p.SetChaos(provider.Chaos{
		Seed:             o.seed,
		FailBeforeCommit: o.faults * 0.4, LoseResponse: o.faults * 0.3, Slow: o.faults * 0.3,
		Latency: 2 * time.Second,
	})
	d := &demo{o: o, b: b, eng: engine.NewEngine(b, slowAPI{p, o.stepTime}), rng: rand.New(rand.NewPCG(uint64(o.seed), 7))}

	var wg sync.WaitGroup
	// The workers stop when ctx ends, but their context has no deadline:
	// the provider holds a caller whose reply it lost until its context's
	// deadline when there is one, and --duration's would hold it to the end.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	context.AfterFunc(ctx, stopWork)
	for i := 1; i <= o.workers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); d.work(workCtx, fmt.Sprintf("worker-%d", i)) }()
	}
	submitted, err := d.submit(ctx)
	if err == nil {
		err = d.waitFinished(ctx, rdb, submitted)
	}
	stopWork()
	wg.Wait()

	s, rerr := engineview.Read(context.Background(), rdb, o.namespace)
	if rerr != nil {
		return fmt.Errorf("final read: %w", rerr)
	}
	st := p.Stats("acct")
	fmt.Fprintf(stdout, "enginedemo: %d jobs submitted (%d refused as full and retried): %d done, %d dead, %d unfinished; %d deliveries, %d worker crashes; provider: %d requests committed, %d replayed, %d lost replies\n",
		s.Jobs, d.refused.Load(), s.Done, s.Dead, s.Unfinished(), s.Deliveries, d.crashes.Load(), st.Committed, st.Replayed, st.LostResponses)
	if errors.Is(err, context.DeadlineExceeded) && o.duration > 0 {
		return nil // --duration reached
	}
	return err
}

// prepare refuses a namespace that holds keys, or deletes them with --reset.
func prepare(ctx context.Context, rdb *goredis.Client, o options) error {
	var keys []string
	iter := rdb.Scan(ctx, 0, globEscape(o.namespace)+":*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("scan %s: %w", o.namespace, err)
	}
	if len(keys) == 0 {
		return nil
	}
	if !o.reset {
		return opscmd.Usagef("namespace %s holds %d keys (%s, ...): pass --reset to delete them first, or choose another --namespace", o.namespace, len(keys), keys[0])
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := rdb.Del(ctx, keys[:n]...).Err(); err != nil {
			return fmt.Errorf("reset %s: %w", o.namespace, err)
		}
		keys = keys[n:]
	}
	return nil
}

// demo is one run's engine, workers and random draws.
type demo struct {
	o   options
	b   *engine.Redis
	eng *engine.Engine

	mu  sync.Mutex
	rng *rand.Rand

	refused, crashes atomic.Int64
}

// draw is a random number in [0, 1) from the demo's seeded source.
func (d *demo) draw() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rng.Float64()
}

// submit submits the jobs at the rate, retrying a job refused as full,
// and returns how many it submitted.
func (d *demo) submit(ctx context.Context) (int, error) {
	every := time.Duration(float64(time.Second) / d.o.rate)
	next := time.Now()
	n := 0
	for d.o.jobs == 0 || n < d.o.jobs {
		if err := sleepUntil(ctx, next); err != nil {
			return n, err
		}
		next = next.Add(every)
		j := engine.Job{ID: fmt.Sprintf("job-%04d", n+1), Account: "acct"}
		bad := d.draw() < d.o.invalid
		for i := range d.o.steps {
			r := fmt.Sprintf("signer-%d@example.com", i)
			if bad && i == d.o.steps-1 {
				r = "not an address"
			}
			j.Steps = append(j.Steps, engine.Step{DocumentID: fmt.Sprintf("%s-doc-%d", j.ID, i), Recipient: r})
		}
		_, err := d.b.Submit(ctx, j)
		if errors.Is(err, engine.ErrFull) {
			d.refused.Add(1)
			continue // the same job again at the next tick
		}
		if err != nil {
			return n, fmt.Errorf("submit %s: %w", j.ID, err)
		}
		n++
	}
	return n, nil
}

// work is one worker: it runs jobs until ctx is done, and now and then
// crashes holding a lease (it leases a job and walks away, as a process
// that died would).
func (d *demo) work(ctx context.Context, name string) {
	for ctx.Err() == nil {
		if d.draw() < d.o.crash {
			if _, err := d.b.Lease(ctx, name); err == nil {
				d.crashes.Add(1)
				continue
			}
		}
		err := d.eng.Work(ctx, name)
		if errors.Is(err, engine.ErrNoJob) {
			_ = sleepUntil(ctx, time.Now().Add(100*time.Millisecond))
		}
		// Any other error (a lease lost to a successor) leaves the job to
		// the engine: the next Work goes on.
	}
}

// waitFinished waits until the submitted jobs are all done or dead.
func (d *demo) waitFinished(ctx context.Context, rdb *goredis.Client, submitted int) error {
	for {
		s, err := engineview.Read(ctx, rdb, d.o.namespace)
		if err != nil {
			return err
		}
		if s.Done+s.Dead >= submitted {
			return nil
		}
		if err := sleepUntil(ctx, time.Now().Add(200*time.Millisecond)); err != nil {
			return err
		}
	}
}

// slowAPI is the provider with a worker's own time per step before each
// Send, so that jobs take time and a backlog can form.
type slowAPI struct {
	provider.API
	step time.Duration
}

// Send waits the step time, then sends.
func (a slowAPI) Send(ctx context.Context, account, key string, req provider.SendRequest) (provider.Receipt, error) {
	if err := sleepUntil(ctx, time.Now().Add(a.step)); err != nil {
		return provider.Receipt{}, err
	}
	return a.API.Send(ctx, account, key, req)
}

// sleepUntil waits until t, or returns ctx's error.
func sleepUntil(ctx context.Context, t time.Time) error {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// globEscape escapes SCAN's pattern characters, so that a namespace
// matches only itself.
func globEscape(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\', '^', '-':
			out = append(out, '\\')
		}
		out = append(out, r)
	}
	return string(out)
}
