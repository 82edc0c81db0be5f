package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/fourth-outcome/labkit/rubric"
)

var engineCmd = &command{
	name:        "engine",
	usage:       "status|metrics|demo [arguments]",
	short:       "watch a running lab-10 engine on Redis: its status, Prometheus metrics, a demo",
	passthrough: true,
	long: `
Engine is an operator's view of the lab-10 engine on a real Redis (the
reference engine's key layout, which a lab 10 that keeps it shares):

	engine status  [--redis ADDR] [--namespace NS] [--watch]
	    queued, leased and dead jobs, the oldest waiting job's age, jobs by
	    delivery count, leases and their time left, dead letters' reasons,
	    and the drain estimate of lab 09's arithmetic
	engine metrics [--redis ADDR] [--namespace NS] [--listen 127.0.0.1:9108]
	    the same numbers at /metrics, for Prometheus
	engine demo    [--redis ADDR] [--workers N] ...
	    the reference engine with faulty workers and provider, to watch
	    (the full kit only: a student release has no solutions/)

Each takes --help for all its flags. The view lives in its own module,
ops/, so that labctl and the labs link no Prometheus client: its first run
builds it (and downloads its modules), which takes about a minute. See
docs/10-engine.md, "Watching the engine".`,
	setup: noFlags(runEngine),
}

// exitStatus is the exit status of a program labctl ran on the user's
// behalf and whose output went straight to the user: labctl exits with it
// and adds nothing.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

func runEngine(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("engine: want status, metrics or demo (see %s engine --help)", e.prog())
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	pkg, name := "./cmd/engine", "engine"
	switch args[0] {
	case "status", "metrics":
	case "demo":
		pkg, name, args = "./cmd/enginedemo", "enginedemo", args[1:]
		for _, need := range []string{filepath.Join(root, "solutions", "10-engine"), filepath.Join(root, "ops", "cmd", "enginedemo")} {
			if _, err := os.Stat(need); err != nil {
				return usagef("engine demo: not in a student release: the demo runs the reference engine (solutions/10-engine)")
			}
		}
	default:
		return usagef("engine: unknown subcommand %q: want status, metrics or demo (see %s engine --help)", args[0], e.prog())
	}
	if _, err := os.Stat(filepath.Join(root, "ops", "go.mod")); err != nil {
		return usagef("engine: this kit has no ops/ module")
	}
	bin := filepath.Join(root, ".labkit", "bin", name)
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintln(e.stderr, "building the engine view, once (it downloads its modules): about a minute...")
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	build.Dir = filepath.Join(root, "ops")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("building ops/%s: %v\n%s", strings.TrimPrefix(pkg, "./"), err, strings.TrimSpace(string(out)))
	}
	// Not tied to ctx: an interrupt reaches the program too (it is in the
	// terminal's process group), which stops in its own way and exits 0.
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, e.stdout, e.stderr
	cmd.Env = append(os.Environ(), rubric.ProgEnv+"="+e.prog())
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return exitStatus(code)
		}
	}
	if err != nil {
		return fmt.Errorf("running ops/%s: %w", strings.TrimPrefix(pkg, "./"), err)
	}
	return nil
}
