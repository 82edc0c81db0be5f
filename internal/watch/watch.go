// Package watch is the body of labctl watch: it checks a lab, then checks
// it again whenever one of its files is saved, and answers the keys the
// learner types (a hint, a check now, the next lab, the list, quit). The
// check, the hint and the list are labctl's, given as functions.
package watch

import (
	"bufio"
	"context"
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
	"github.com/fourth-outcome/labkit/internal/usage"
	"github.com/fourth-outcome/labkit/term"
)

// Settle is how long watch waits after a file event for the rest of the
// save (editors write in several steps) before it checks again.
const Settle = 100 * time.Millisecond

// Options say which lab to watch, and what to run.
type Options struct {
	// Root is the kit checkout.
	Root string
	// Lab is the lab to watch, a number or a name; "" watches the first
	// lab not passed yet.
	Lab string
	// Settle is how long watch waits after a save for more saves before
	// it checks again.
	Settle time.Duration
	// In is where the keys are read from; Stdout and Stderr where watch
	// writes.
	In             io.Reader
	Stdout, Stderr io.Writer
	// Check checks lab and prints its feedback; an error stops watch (a
	// lab that fails is none). Hint shows the lab's next hint; its error
	// is said and watch goes on. List shows the progress across the labs.
	Check func(ctx context.Context, lab grader.Lab) error
	Hint  func(ctx context.Context, lab grader.Lab) error
	List  func(ctx context.Context)
}

// Run watches until the learner quits, ctx is done, or a check fails to
// run. An unknown lab, or a lab folder that cannot be watched, is a usage
// error (*usage.Error).
func Run(ctx context.Context, o Options) error {
	var lab grader.Lab
	if o.Lab != "" {
		l, err := course.Find(o.Lab)
		if err != nil {
			return usage.Errorf("%v", err)
		}
		lab = l.Lab
	} else {
		st, err := progress.Load(o.Root)
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
	dir := func(l grader.Lab) string { return filepath.Join(o.Root, "labs", l.Dir) }
	if err := w.Add(dir(lab)); err != nil {
		return usage.Errorf("watch: labs/%s: %v", lab.Dir, err)
	}

	if f, ok := o.In.(*os.File); ok && term.IsTerminal(f) {
		// Without the key mode, keys wait for Enter: watch still works.
		if restore, err := term.KeysWithoutEnter(f); err == nil {
			defer restore()
		}
	}
	keys := make(chan string)
	done := make(chan struct{})
	defer close(done)
	go readKeys(o.In, keys, done)
	color := term.ColorFor(o.Stdout, func(string) string { return "" })

	check := func() error {
		if color {
			io.WriteString(o.Stdout, "\x1b[H\x1b[2J") // the result replaces the last one
		} else {
			fmt.Fprintf(o.Stdout, "\n──── %s ────\n", time.Now().Format("15:04:05"))
		}
		err := o.Check(ctx, lab)
		fmt.Fprintf(o.Stdout, "\nwatching labs/%s/ — save a file to check again; keys: h hint · c check · n next lab · l list · q quit\n", lab.Dir)
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
				settle = time.After(o.Settle)
			}
		case err, ok := <-w.Errors:
			if ok {
				fmt.Fprintf(o.Stderr, "labctl watch: %v\n", err)
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
				if err := o.Hint(ctx, lab); err != nil {
					fmt.Fprintf(o.Stderr, "labctl: %v\n", err)
				}
			case "l":
				o.List(ctx)
			case "n":
				next, ok := nextLab(lab)
				if !ok {
					fmt.Fprintln(o.Stdout, "This is the last lab of the kit.")
					continue
				}
				w.Remove(dir(lab))
				lab = next
				if err := w.Add(dir(lab)); err != nil {
					return usage.Errorf("watch: labs/%s: %v", lab.Dir, err)
				}
				if err := check(); err != nil {
					return err
				}
			default:
				fmt.Fprintf(o.Stdout, "unknown key %q: h hint · c check · n next lab · l list · q quit\n", k)
			}
		}
	}
}

// relevant reports whether a file event should re-run the check: a Go
// file written, created, renamed or removed (editors save through a
// rename), not the editor's swap and backup files.
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
