// Command engine is an operator's view of the lab-10 engine: it reads one
// namespace of a Redis server in the reference engine's key layout (a
// student's lab 10 that keeps the layout too) and prints its status, or
// serves the same numbers to Prometheus at /metrics.
//
//	engine status  [--redis ADDR] [--namespace NS] [--watch] [--interval D] [--window D]
//	engine metrics [--redis ADDR] [--namespace NS] [--listen 127.0.0.1:9108] [--interval D] [--window D]
//
// The demo that gives it something to watch is its own program,
// ops/cmd/enginedemo, because it runs the reference engine: a student
// release, which has no solutions/, has no demo. Run from ops/ (labctl
// engine runs it for you):
//
//	go run ./cmd/engine status --namespace labkit:demo --watch
//
// Exit status: 0 done (or interrupted), 1 an error (Redis unreachable, a
// failed read), 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	goredis "github.com/redis/go-redis/v9"
	"golang.org/x/term"

	"github.com/fourth-outcome/labkit/ops/engineview"
	"github.com/fourth-outcome/labkit/ops/opscmd"
	"github.com/fourth-outcome/labkit/redisaddr"
)

// DefaultNamespace is the namespace read when --namespace is not given:
// the demo's.
const DefaultNamespace = "labkit:demo"

// DefaultListen is where metrics listens when --listen is not given:
// loopback only.
const DefaultListen = "127.0.0.1:9108"

func main() { opscmd.Main("engine", run) }

const usage = `engine: an operator's view of the lab-10 engine on Redis.

Usage:
  engine status  [--redis ADDR] [--namespace NS] [--watch] [--interval D] [--window D]
  engine metrics [--redis ADDR] [--namespace NS] [--listen ADDR] [--interval D] [--window D]

status prints one namespace of the reference engine's key layout
(<ns>:job:<id>, <ns>:due, <ns>:token): jobs queued, leased, done and dead;
how long the oldest visible job has waited; the unfinished jobs by delivery
count; the leases with their time left; the dead letters' reasons; and the
drain estimate, lab 09's backlog / (finish rate - arrival rate) with the
rates measured over --window ("never" when jobs do not finish faster than
they arrive). Without --watch it reads twice, --window apart (--window 0:
once, and no estimate). With --watch it refreshes every --interval, the
rates over the last --window, until interrupted.

metrics serves the same numbers at http://ADDR/metrics for Prometheus
(loopback by default), reading Redis at every scrape and every --interval.

The demo, which runs the reference engine with faulty workers so there is
something to watch, is its own program: go run ./cmd/enginedemo --help
(the full kit only: a student release has no solutions/).

Run "engine status --help" or "engine metrics --help" for the flags.
`

// run runs the command line args (without the program name).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return opscmd.Usagef("want a command: status or metrics")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "status":
		return runStatus(ctx, args[1:], stdout, stderr)
	case "metrics":
		return runMetrics(ctx, args[1:], stderr)
	case "demo":
		return opscmd.Usagef("demo is its own program, since it runs the reference engine (absent from a student release): from ops/, go run ./cmd/enginedemo")
	}
	return opscmd.Usagef("unknown command %q: want status or metrics", args[0])
}

// common are the flags of every command.
type common struct {
	redis     string
	namespace string
	interval  time.Duration
	window    time.Duration
}

func (c *common) register(fs *flag.FlagSet, window time.Duration) {
	addr := os.Getenv(redisaddr.Env)
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	fs.StringVar(&c.redis, "redis", addr, "the Redis server: host:port or redis://host:port/db (default $REDIS_ADDR, else 127.0.0.1:6379)")
	fs.StringVar(&c.namespace, "namespace", DefaultNamespace, "the engine's namespace: its keys start with it and ':'")
	fs.DurationVar(&c.interval, "interval", time.Second, "time between two reads")
	fs.DurationVar(&c.window, "window", window, "the span the arrival and finish rates are measured over")
}

// parse parses args into fs, with one-line errors.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintf(stderr, "Usage of engine %s:\n", fs.Name())
			fs.PrintDefaults()
			return err
		}
		return opscmd.Usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return opscmd.Usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// connect checks the flags and returns a client of a server that answers.
func (c *common) connect(ctx context.Context, cmd string) (*goredis.Client, error) {
	if c.namespace == "" {
		return nil, opscmd.Usagef("%s: --namespace is empty", cmd)
	}
	if c.interval <= 0 {
		return nil, opscmd.Usagef("%s: --interval %v: want a positive duration", cmd, c.interval)
	}
	if c.window < 0 {
		return nil, opscmd.Usagef("%s: --window %v: want zero or a positive duration", cmd, c.window)
	}
	rdb, _, err := opscmd.DialRedis(ctx, c.redis)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return rdb, nil
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	var c common
	c.register(fs, 5*time.Second)
	watch := fs.Bool("watch", false, "refresh every --interval until interrupted")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	rdb, err := c.connect(ctx, "status")
	if err != nil {
		return err
	}
	defer rdb.Close()
	if !*watch && c.window == 0 {
		// One read, and no estimate.
		s, err := engineview.Read(ctx, rdb, c.namespace)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		return s.Format(stdout)
	}
	m, err := engineview.NewMonitor(rdb, c.namespace, engineview.MonitorOptions{Window: max(c.window, time.Nanosecond)})
	if err != nil {
		return opscmd.Usagef("status: %v", err)
	}
	s, err := m.Poll(ctx)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if !*watch {
		if err := opscmd.Sleep(ctx, c.window); err != nil {
			return err
		}
		s, err := m.Poll(ctx)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		return s.Format(stdout)
	}
	clearScreen := isTerminal(stdout)
	for first := true; ; first = false {
		if clearScreen {
			fmt.Fprint(stdout, "\x1b[H\x1b[2J")
		} else if !first {
			fmt.Fprintln(stdout)
		}
		if err := s.Format(stdout); err != nil {
			return err
		}
		if err := opscmd.Sleep(ctx, c.interval); err != nil {
			return err
		}
		if s, err = m.Poll(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("status: %w", err)
		}
	}
}

func runMetrics(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("metrics", flag.ContinueOnError)
	var c common
	c.register(fs, time.Minute)
	listen := fs.String("listen", DefaultListen, "the address to serve /metrics on (loopback by default; 0.0.0.0:PORT exposes it to the network)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if c.window == 0 {
		return opscmd.Usagef("metrics: --window 0: want a positive duration")
	}
	rdb, err := c.connect(ctx, "metrics")
	if err != nil {
		return err
	}
	defer rdb.Close()
	m, err := engineview.NewMonitor(rdb, c.namespace, engineview.MonitorOptions{Window: c.window})
	if err != nil {
		return opscmd.Usagef("metrics: %v", err)
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(engineview.NewCollector(m, 5*time.Second)); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return opscmd.Usagef("metrics: --listen %s: %v", *listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "engine metrics of namespace %s: /metrics\n", c.namespace)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(stderr, "engine: serving the metrics of %s (Redis %s) at http://%s/metrics; interrupt to stop\n",
		c.namespace, redisaddr.Describe(c.redis), ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	// Reads between scrapes sharpen the latency histogram and the rates.
	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = srv.Shutdown(shut)
			return ctx.Err()
		case err := <-served:
			return fmt.Errorf("metrics: %w", err)
		case <-tick.C:
			if _, err := m.Poll(ctx); err != nil && ctx.Err() == nil {
				fmt.Fprintf(stderr, "engine: metrics: %s\n", strings.TrimSpace(err.Error()))
			}
		}
	}
}

// isTerminal reports whether w is a terminal, whose screen a refresh clears.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
