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
	"flag"
	"io"
	"time"

	"github.com/fourth-outcome/labkit/ops/opscmd"
)

func main() { opscmd.Main("enginebench", run) }

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
	fs.StringVar(&o.redis, "redis", "", "the Redis server, host:port or redis://host:port/db (required; it should serve nothing else while the bench runs)")
	fs.StringVar(&o.namespace, "namespace", "labkit:enginebench", "the engine's namespace (its keys are deleted before each run)")
	fs.StringVar(&o.queue, "queue", "labkit-enginebench", "asynq's queue (its keys are deleted before each run)")
	fs.IntVar(&o.jobs, "jobs", 2000, "jobs per run, all submitted before the workers start")
	fs.IntVar(&o.workers, "workers", 8, "workers: goroutines looping the engine's Work, and asynq's concurrency")
	fs.IntVar(&o.runs, "runs", 5, "runs of each system, interleaved; the medians are printed")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "the longest one run may take")
	fs.StringVar(&o.only, "only", "", `run one system only: "engine" or "asynq" (no ratios)`)
	if err := opscmd.Parse(fs, args, help, stdout); err != nil {
		return o, err
	}
	switch {
	case o.redis == "":
		return o, opscmd.Usagef("--redis is required (a Redis server that serves nothing else while the bench runs)")
	case o.namespace == "" || o.queue == "":
		return o, opscmd.Usagef("--namespace and --queue must not be empty")
	case o.jobs < 1:
		return o, opscmd.Usagef("--jobs %d: want at least 1", o.jobs)
	case o.workers < 1:
		return o, opscmd.Usagef("--workers %d: want at least 1", o.workers)
	case o.runs < 1:
		return o, opscmd.Usagef("--runs %d: want at least 1", o.runs)
	case o.timeout <= 0:
		return o, opscmd.Usagef("--timeout %v: want a positive duration", o.timeout)
	case o.only != "" && o.only != "engine" && o.only != "asynq":
		return o, opscmd.Usagef(`--only %q: want "engine" or "asynq"`, o.only)
	}
	return o, nil
}
