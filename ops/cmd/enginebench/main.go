// Command enginebench runs the reference lab-10 engine (solutions/10-engine)
// and asynq (github.com/hibiken/asynq), the Redis-backed queue a Go team
// would reach for, side by side on the same Redis server: N goroutines
// looping the engine's Work against N asynq workers, each saturated by the
// same fixed number of jobs whose one step is a no-op. It prints, for each
// system, the median of the runs of jobs per second, the p50 and p99
// submit-to-done latency and the Redis commands per job, then the
// engine/asynq ratios.
//
// It imports the reference solution, so it builds only in the full kit: a
// student release has no solutions/ and so no bench. Run from ops/:
//
//	go run ./cmd/enginebench --redis 127.0.0.1:6379 --jobs 2000 --workers 8 --runs 5
//
// Before each run it deletes its own keys only: the engine's --namespace
// and asynq's --queue (asynq:{<queue>}:*). Redis commands per job are the
// server's total_commands_processed (INFO stats, Lua's inner commands
// included) over the run, so the server should serve nothing else; the
// commands the bench's clients sent are printed next to them. Exit status:
// 0 done, 1 an error, 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError is bad input: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef is a usageError with a formatted message.
func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// exitCode prints err in one line on stderr and returns the exit status.
func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "enginebench: %v (enginebench --help for usage)\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "enginebench: %v\n", err)
	return 1
}

// options are the bench's flags.
type options struct {
	redis, namespace, queue string
	jobs, workers, runs     int
	timeout                 time.Duration
	only                    string
}

const help = `enginebench runs the reference lab-10 engine and asynq side by side on one
Redis server, saturated by a fixed number of no-op jobs, and prints jobs per
second, p50/p99 submit-to-done latency and Redis commands per job (medians of
the runs) with the engine/asynq ratios. Full kit only: it imports
solutions/10-engine.

Usage: enginebench --redis ADDR [flags]
`

// parse parses the command line into options, with one-line errors; --help
// prints the usage on stdout.
func parse(args []string, stdout io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("enginebench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.redis, "redis", "", "the Redis server, host:port or redis://host:port/db (required; it should serve nothing else while the bench runs)")
	fs.StringVar(&o.namespace, "namespace", "labkit:enginebench", "the engine's namespace (its keys are deleted before each run)")
	fs.StringVar(&o.queue, "queue", "labkit-enginebench", "asynq's queue (its keys are deleted before each run)")
	fs.IntVar(&o.jobs, "jobs", 2000, "jobs per run, all submitted before the workers start")
	fs.IntVar(&o.workers, "workers", 8, "workers: goroutines looping the engine's Work, and asynq's concurrency")
	fs.IntVar(&o.runs, "runs", 5, "runs of each system, interleaved; the medians are printed")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "the longest one run may take")
	fs.StringVar(&o.only, "only", "", `run one system only: "engine" or "asynq" (no ratios)`)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, help)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return o, err
		}
		return o, usagef("%v", err)
	}
	switch {
	case fs.NArg() > 0:
		return o, usagef("unexpected argument %q", fs.Arg(0))
	case o.redis == "":
		return o, usagef("--redis is required (a Redis server that serves nothing else while the bench runs)")
	case o.namespace == "" || o.queue == "":
		return o, usagef("--namespace and --queue must not be empty")
	case o.jobs < 1:
		return o, usagef("--jobs %d: want at least 1", o.jobs)
	case o.workers < 1:
		return o, usagef("--workers %d: want at least 1", o.workers)
	case o.runs < 1:
		return o, usagef("--runs %d: want at least 1", o.runs)
	case o.timeout <= 0:
		return o, usagef("--timeout %v: want a positive duration", o.timeout)
	case o.only != "" && o.only != "engine" && o.only != "asynq":
		return o, usagef(`--only %q: want "engine" or "asynq"`, o.only)
	}
	return o, nil
}
