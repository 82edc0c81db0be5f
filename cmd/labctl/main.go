// Command labctl is the course's command line: students check their labs and
// read hints, authors verify the kit, and the docs render to HTML.
//
// main only maps errors to exit codes; run does the work and is what the
// tests call.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/fourth-outcome/labkit/internal/usage"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// Exit codes: 0 success, 1 the checked work fails (a lab that does not pass,
// a verify that finds a problem), 2 bad input or an environment problem.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// errFailed means the command worked and its verdict is "fails"; the
// feedback has already been printed.
var errFailed = errors.New("failed")

// usageError is bad input: an unknown lab, a bad flag, no kit checkout.
// The commands' bodies in internal/ return it too.
type usageError = usage.Error

// usagef is a usage error with a formatted message.
func usagef(format string, args ...any) error {
	return usage.Errorf(format, args...)
}

func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	var es exitStatus
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &es):
		return int(es) // the program labctl ran has said why
	case errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errFailed):
		return exitFail
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "labctl: %s\n", ue.Msg)
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "labctl: interrupted")
		return exitUsage
	default:
		fmt.Fprintf(stderr, "labctl: %v\n", err)
		return exitUsage
	}
}
