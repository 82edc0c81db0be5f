package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/progress"
)

// modulePath is the kit's module; a directory whose go.mod declares it is a
// kit checkout.
const modulePath = "github.com/fourth-outcome/labkit"

func getwd() (string, error) { return os.Getwd() }

// kitRoot finds the kit checkout containing the working directory.
func (e *env) kitRoot() (string, error) {
	if e.root != "" {
		return e.root, nil
	}
	dir, err := e.getwd()
	if err != nil {
		return "", usagef("cannot read the working directory: %v", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module "+modulePath+"\n")) {
			e.root = d
			return d, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", usagef("no kit checkout here: %s is not inside a clone of the lab kit (no go.mod declaring %s); cd into your clone", dir, modulePath)
}

// resolveLab finds a lab by number or name, as a usage error if unknown.
func resolveLab(name string) (grader.Lab, error) {
	l, err := course.Find(name)
	if err != nil {
		return grader.Lab{}, usagef("%v", err)
	}
	return l.Lab, nil
}

// raceMode turns the --race flag ("auto", "on", "off") into a decision,
// saying once on stderr when the detector is unavailable.
func (e *env) raceMode(flagValue string) (bool, error) {
	switch flagValue {
	case "off", "false", "0":
		return false, nil
	case "on", "true", "1", "auto", "":
		ok, why := grader.RaceSupport()
		if ok {
			return true, nil
		}
		if flagValue == "on" || flagValue == "true" || flagValue == "1" {
			return false, usagef("--race=on: the race detector is unavailable: %s", why)
		}
		e.raceNoteOnce.Do(func() {
			fmt.Fprintf(e.stderr, "note: running without the race detector, because %s (it needs cgo and a C compiler, e.g. apt-get install gcc). Checks still run; data races will not be reported.\n", why)
		})
		return false, nil
	default:
		return false, usagef("--race=%q: want auto, on or off", flagValue)
	}
}

// warnNotSaved says on stderr what labctl could not remember in .labkit/
// and what that means for the learner. The command's own work is done (its
// output says what it did) and its exit status stands.
func (e *env) warnNotSaved(what string, err error, means string) {
	progress.WarnNotSaved(e.stderr, what, err, means)
}
