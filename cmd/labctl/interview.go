package main

import (
	"context"
	"flag"

	"github.com/fourth-outcome/labkit/internal/interview"
)

type interviewOpts struct {
	reveal   bool
	spoilers bool
	seed     uint64
	race     string
}

var interviewCmd = &command{
	name:  "interview",
	usage: "[--reveal] [--seed N] [list | scenario | numbers | bug | DRILL]",
	short: "interview drills: scenarios, numbers, find the bug",
	long: `
Interview runs one drill and remembers what you have done
(.labkit/interview.json). Without an argument it picks the next drill you
have not done, taking scenarios, numbers and bugs in turn.

	scenario  a prompt from docs/interview.md: type your answer (an empty
	          line ends it), then read the strong and the weak model answer
	          and score yourself on the points a strong answer names
	numbers   backlog growth, recovery time, retry amplification or full
	          jitter, generated from --seed; the answer is checked within 1%
	          and worked step by step
	bug       the code of a catalogued mistake: name the failure window, then
	          see the diff and the timeline that exposes it (needs solutions/);
	          a lab's bugs open once you have passed it (list counts the
	          rest without naming them), or all at once with --spoilers
	list      every drill and what you did
	DRILL     one drill by name, as list shows it

Everything is read from the standard input, so a drill can be scripted:
printf 'my answer\n\n1 2\n' | go run ./cmd/labctl interview duplicates.`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &interviewOpts{}
		fs.BoolVar(&o.reveal, "reveal", false, "show the model answer without asking for yours")
		fs.BoolVar(&o.spoilers, "spoilers", false, "open the find-the-bug drills of labs you have not passed (they show a lab's bugs and its reference code)")
		fs.Uint64Var(&o.seed, "seed", 0, "seed of a numbers drill (0: a new one each time)")
		fs.StringVar(&o.race, "race", "auto", "race detector for the bug drills' timeline: auto, on, off")
		return func(ctx context.Context, e *env, args []string) error { return runInterview(ctx, e, o, args) }
	},
}

func runInterview(ctx context.Context, e *env, o *interviewOpts, args []string) error {
	if len(args) > 1 {
		return usagef("interview: one drill at a time (see %s interview --help)", e.prog())
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	drill := ""
	if len(args) == 1 {
		drill = args[0]
	}
	return interview.Run(ctx, interview.Options{
		Root:        root,
		Drill:       drill,
		Reveal:      o.reveal,
		Spoilers:    o.spoilers,
		Seed:        o.seed,
		ResolveRace: func() (bool, error) { return e.raceMode(o.race) },
		Prog:        e.prog(),
		In:          input(ctx),
		Stdout:      e.stdout,
		Stderr:      e.stderr,
	})
}
