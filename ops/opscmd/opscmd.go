// Package opscmd is what the ops commands (engine, enginedemo and
// enginebench) share: their main, which maps an error to an exit status in
// one line, bad-input errors, a sleep that ends with its context, and a
// Redis client that has answered PING.
package opscmd

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

	goredis "github.com/redis/go-redis/v9"

	"github.com/fourth-outcome/labkit/redisaddr"
	"github.com/fourth-outcome/labkit/redisaddr/redisclient"
)

// RunFunc is a command's body: it reads args, writes to stdout and stderr,
// and returns what went wrong.
type RunFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// Main runs run on the process's arguments with a context that an
// interrupt or SIGTERM cancels, and exits with ExitCode's status.
func Main(name string, run RunFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(ExitCode(name, err, os.Stderr))
}

// usageError is bad input: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// Usagef returns an error for bad input, which ExitCode maps to 2 (also
// when it is wrapped).
func Usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// ExitCode prints err in one line on stderr, prefixed by the command's
// name, and returns the exit status: 0 for no error, --help or an
// interrupt, 2 for bad input (with a pointer to --help), 1 otherwise.
func ExitCode(name string, err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp), errors.Is(err, context.Canceled):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v (%s --help for usage)\n", name, err, name)
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return 1
}

// Parse parses args into fs. For --help it prints help and fs's flags on
// stdout and returns flag.ErrHelp; a bad flag or any positional argument is
// a Usagef error.
func Parse(fs *flag.FlagSet, args []string, help string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, help)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return err
		}
		return Usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// Sleep waits d, or returns ctx's error when ctx ends first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// DialRedis returns a client of addr (host:port or a redis:// or rediss://
// URL) that has answered PING, and the options it was made from. A bad
// address is a Usagef error; go-redis's own log lines are silenced, since
// every error is returned and said once.
func DialRedis(ctx context.Context, addr string) (*goredis.Client, *goredis.Options, error) {
	ro, err := redisclient.Options(addr)
	if err != nil {
		return nil, nil, Usagef("--redis: %v", err)
	}
	goredis.SetLogger(quietLogger{})
	rdb := goredis.NewClient(ro)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, nil, fmt.Errorf("cannot reach Redis at %s: %w", redisaddr.Describe(addr), err)
	}
	return rdb, ro, nil
}

// quietLogger discards go-redis's own log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
