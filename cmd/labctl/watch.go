package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/fsnotify/fsnotify"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/progress"
	"github.com/fourth-outcome/labkit/term"
)

type watchOpts struct {
	check checkOpts
	// settle is how long watch waits after a save for more saves (an
	// editor often writes a file in several steps) before re-running.
	settle time.Duration
	// runStarted and runDone, when set, are called as each check starts
	// and ends (tests and make bench use them).
	runStarted func(lab grader.Lab)
	runDone    func(lab grader.Lab, err error)
}

var watchCmd = &command{
	name:  "watch",
	usage: "[flags] [LAB]",
	short: "re-run a lab's check every time you save one of its files",
	long: `
Watch checks LAB (by default the first lab you have not passed), then checks
it again whenever a file in labs/NN-name/ is saved, showing the feedback in
place. Press a key (on a terminal no Enter is needed; elsewhere end each
key with Enter):

	h   the next hint for this lab
	c   check again now
	n   go on to the next lab
	l   your progress across every lab (labctl list)
	q   quit (Ctrl-C works too)`,
	setup: func(fs *flag.FlagSet) runFunc {
		o := &watchOpts{settle: watchSettle}
		fs.StringVar(&o.check.race, "race", "auto", "race detector: auto (on when cgo works), on, off")
		fs.StringVar(&o.check.redis, "redis", "", "run Redis-backed labs against this real server (host:port or redis://host:port/db)")
		fs.DurationVar(&o.check.timeout, "timeout", 2*time.Minute, "give up on a suite that runs longer than this, every rerun included")
		fs.DurationVar(&o.check.caseTimeout, "case-timeout", grader.DefaultCaseTimeout, "stop a case still running after this long and report where your code was")
		return func(ctx context.Context, e *env, args []string) error { return runWatch(ctx, e, o, args) }
	},
}

func runWatch(ctx context.Context, e *env, o *watchOpts, args []string) error {
	if len(args) > 1 {
		return usagef("watch: one lab at a time (got %d arguments)", len(args))
	}
	root, err := e.kitRoot()
	if err != nil {
		return err
	}
	var lab grader.Lab
	if len(args) == 1 {
		if lab, err = resolveLab(args[0]); err != nil {
			return err
		}
	} else {
		st, err := progress.Load(root)
		if err != nil {
			return err
		}
		lab, _ = st.FirstUnpassed()
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer w.Close()
	dir := func(l grader.Lab) string { return filepath.Join(root, "labs", l.Dir) }
	if err := w.Add(dir(lab)); err != nil {
		return usagef("watch: labs/%s: %v", lab.Dir, err)
	}

	in := input(ctx)
	if f, ok := in.(*os.File); ok && term.IsTerminal(f) {
		// Without the key mode, keys wait for Enter: watch still works.
		if restore, err := term.KeysWithoutEnter(f); err == nil {
			defer restore()
		}
	}
	keys := make(chan string)
	done := make(chan struct{})
	defer close(done)
	go readKeys(in, keys, done)
	color := term.ColorFor(e.stdout, func(string) string { return "" })

	check := func() error {
		if color {
			io.WriteString(e.stdout, "\x1b[H\x1b[2J") // the result replaces the last one
		} else {
			fmt.Fprintf(e.stdout, "\n──── %s ────\n", time.Now().Format("15:04:05"))
		}
		if o.runStarted != nil {
			o.runStarted(lab)
		}
		co := o.check
		co.quiet = true
		fmt.Fprintf(e.stderr, "checking lab %02d %s...\n", lab.Number, lab.Slug)
		err := runCheck(ctx, e, &co, []string{lab.Dir})
		if o.runDone != nil {
			o.runDone(lab, err)
		}
		if errors.Is(err, errFailed) {
			err = nil
		}
		fmt.Fprintf(e.stdout, "\nwatching labs/%s/ — save a file to check again; keys: h hint · c check · n next lab · l list · q quit\n", lab.Dir)
		return err
	}
	if err := check(); err != nil {
		return err
	}

	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if relevant(ev) && settle == nil {
				settle = time.After(o.settle)
			}
		case err, ok := <-w.Errors:
			if ok {
				fmt.Fprintf(e.stderr, "labctl watch: %v\n", err)
			}
		case <-settle:
			settle = nil
			if err := check(); err != nil {
				return err
			}
		case k, ok := <-keys:
			if !ok {
				keys = nil // input closed: keep watching until interrupted
				continue
			}
			switch k {
			case "q":
				return nil
			case "c":
				if err := check(); err != nil {
					return err
				}
			case "h":
				if err := runHint(ctx, e, []string{lab.Dir}); err != nil {
					fmt.Fprintf(e.stderr, "labctl: %v\n", err)
				}
			case "l":
				runList(ctx, e, nil)
			case "n":
				next, ok := nextLab(lab)
				if !ok {
					fmt.Fprintln(e.stdout, "This is the last lab of the kit.")
					continue
				}
				w.Remove(dir(lab))
				lab = next
				if err := w.Add(dir(lab)); err != nil {
					return usagef("watch: labs/%s: %v", lab.Dir, err)
				}
				if err := check(); err != nil {
					return err
				}
			default:
				fmt.Fprintf(e.stdout, "unknown key %q: h hint · c check · n next lab · l list · q quit\n", k)
			}
		}
	}
}

// relevant reports whether a file event should re-run the check: a Go
// file or the lab's README written, created, renamed or removed (editors
// save through a rename), not the editor's swap and backup files.
func relevant(ev fsnotify.Event) bool {
	name := filepath.Base(ev.Name)
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") {
		return false
	}
	if !strings.HasSuffix(name, ".go") {
		return false
	}
	return ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename|fsnotify.Remove) != 0
}

// nextLab is the built lab after lab.
func nextLab(lab grader.Lab) (grader.Lab, bool) {
	built := course.Built()
	for i, l := range built {
		if l.Number == lab.Number && i+1 < len(built) {
			return built[i+1].Lab, true
		}
	}
	return grader.Lab{}, false
}

// readKeys sends each key typed on r (one character, lower-cased; spaces
// and line ends are skipped) to keys, and closes keys at the end of the
// input; it stops early when done is closed.
func readKeys(r io.Reader, keys chan<- string, done <-chan struct{}) {
	defer close(keys)
	br := bufio.NewReader(r)
	for {
		c, _, err := br.ReadRune()
		if err != nil {
			return
		}
		if unicode.IsSpace(c) {
			continue
		}
		select {
		case keys <- strings.ToLower(string(c)):
		case <-done:
			return
		}
	}
}

// watchSettle is how long watch waits after a file event for the rest of
// the save (editors write in several steps) before it checks again.
const watchSettle = 100 * time.Millisecond
