package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
)

// command is one subcommand, in the manner of cmd/go's base.Command.
type command struct {
	name  string
	usage string // arguments after the name
	short string // one line for the command list
	long  string // shown by --help
	// setup defines the command's flags on fs and returns the function
	// that runs the command with them.
	setup func(fs *flag.FlagSet) runFunc
	// passthrough hands every argument after the name, flags included, to
	// the command unparsed: it runs another program that parses them
	// (engine). Only a first argument -h or --help is labctl's.
	passthrough bool
}

// runFunc runs a command with its flags parsed; args are the positional
// arguments.
type runFunc func(ctx context.Context, e *env, args []string) error

// noFlags is the setup of a command that takes no flags.
func noFlags(run runFunc) func(*flag.FlagSet) runFunc {
	return func(*flag.FlagSet) runFunc { return run }
}

// env is what every command gets: where to write, and the kit checkout.
type env struct {
	stdout, stderr io.Writer
	getwd          func() (string, error)
	root           string // found lazily by kitRoot
	raceNoteOnce   sync.Once
}

var errHelp = errors.New("help shown")

func commands() []*command {
	return []*command{checkCmd, watchCmd, listCmd, hintCmd, solutionCmd, resetCmd, interviewCmd, docsCmd, engineCmd, gradeCmd, gradebookCmd, releaseCmd, verifyCmd, mutateCmd}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runIn(ctx, getwd, args, stdout, stderr)
}

// runIn is run with the working directory supplied, so tests can run
// commands in several kit copies at once.
func runIn(ctx context.Context, wd func() (string, error), args []string, stdout, stderr io.Writer) error {
	e := &env{stdout: stdout, stderr: stderr, getwd: wd}
	if len(args) == 0 {
		printUsage(e, stderr)
		return usagef("no command given")
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "-help" || name == "help" {
		if len(args) > 1 {
			if c := findCommand(args[1]); c != nil {
				printCommandHelp(e, stdout, c, nil)
				return errHelp
			}
		}
		printUsage(e, stdout)
		return errHelp
	}
	c := findCommand(name)
	if c == nil {
		return usagef("unknown command %q (try: %s help)", name, e.prog())
	}
	fs := flag.NewFlagSet("labctl "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runCommand := c.setup(fs)
	if c.passthrough {
		if len(args) > 1 && (args[1] == "-h" || args[1] == "--help" || args[1] == "-help") {
			printCommandHelp(e, stdout, c, nil)
			return errHelp
		}
		return runCommand(ctx, e, args[1:])
	}
	if err := fs.Parse(flagsFirst(fs, args[1:])); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(e, stdout, c, fs)
			return errHelp
		}
		return usagef("%s: %v (see %s %s --help)", c.name, err, e.prog(), c.name)
	}
	return runCommand(ctx, e, fs.Args())
}

// flagsFirst moves flags that follow positional arguments to the front, so
// "labctl check 1 --json" works like "labctl check --json 1".
func flagsFirst(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				continue
			}
			if i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		}
	}
	return append(flags, pos...)
}

func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func printUsage(e *env, w io.Writer) {
	fmt.Fprint(w, e.commandsIn(`labctl checks your labs, shows hints, and verifies the kit.

Usage:

	go run ./cmd/labctl <command> [arguments]

Commands:

`))
	for _, c := range commands() {
		fmt.Fprintf(w, "\t%-10s %s\n", c.name, c.short)
	}
	fmt.Fprint(w, e.commandsIn(`
Run "go run ./cmd/labctl <command> --help" for a command's flags.
Exit status: 0 all good, 1 the lab (or the kit) fails, 2 bad input.
`))
}

func printCommandHelp(e *env, w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s %s %s\n\n%s\n", e.prog(), c.name, c.usage, e.commandsIn(strings.TrimSpace(c.long)))
	if fs == nil {
		fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.setup(fs)
	}
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if has {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}
