// Package course is the kit's one registry of labs. Every other list of labs
// is derived from it: the grader's view of each lab (directory, test file,
// pristine test shim, rubric), which labs CI also runs against a real Redis
// server, which need the race detector, and the checks that labs/,
// solutions/, suites/, docs/ and the two index tables agree with it
// (CheckTree).
//
// Adding a lab means its folders, its chapter, its shim in shims/ and one
// line in labs below. A lab still to come is a planned line, which needs no
// folders.
package course

import (
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/rubric"
	"github.com/fourth-outcome/labkit/suites/ambiguoussuite"
	"github.com/fourth-outcome/labkit/suites/backpressuresuite"
	"github.com/fourth-outcome/labkit/suites/checkpointsuite"
	"github.com/fourth-outcome/labkit/suites/claimsuite"
	"github.com/fourth-outcome/labkit/suites/deadlettersuite"
	"github.com/fourth-outcome/labkit/suites/enginesuite"
	"github.com/fourth-outcome/labkit/suites/fencingsuite"
	"github.com/fourth-outcome/labkit/suites/leasesuite"
	"github.com/fourth-outcome/labkit/suites/redissuite"
	"github.com/fourth-outcome/labkit/suites/retrysuite"
)

// Lab is one lab of the course: what the grader needs to run its suite, and
// what the kit's own tests and CI need to know about it.
type Lab struct {
	grader.Lab

	// Redis is set for a lab whose suite talks to Redis: it runs on an
	// embedded miniredis by default and CI also runs it against a real
	// server.
	Redis bool
	// Race is set for a lab with cases that only the race detector can
	// judge (concurrent claims, concurrent clients).
	Race bool
	// Planned is set for a lab that is not written yet. It has a number,
	// a slug and a title, and no folders, suite or chapter.
	Planned bool
}

// Package is the lab's Go package name, which its directory ends with.
func (l Lab) Package() string { return l.Slug }

// Chapter is the lab's docs chapter, relative to the kit root.
func (l Lab) Chapter() string { return "docs/" + l.Dir + ".md" }

// Suite is the directory of the lab's suite package, relative to the kit
// root.
func (l Lab) Suite() string { return "suites/" + l.Slug + "suite" }

type flags uint8

const (
	usesRedis flags = 1 << iota
	needsRace
	// schedulesSync: the suite schedules the implementation's mutex
	// operations (suites/syncpoint), so the grader instruments its "sync"
	// import.
	schedulesSync
)

// labs is the registry: one line per lab, in course order.
var labs = []Lab{
	built(claimsuite.Lab, needsRace|schedulesSync),
	built(redissuite.Lab, usesRedis|needsRace),
	built(ambiguoussuite.Lab, 0),
	built(retrysuite.Lab, needsRace),
	built(leasesuite.Lab, needsRace|schedulesSync),
	built(fencingsuite.Lab, needsRace|schedulesSync),
	built(deadlettersuite.Lab, needsRace),
	built(checkpointsuite.Lab, needsRace),
	built(backpressuresuite.Lab, needsRace),
	built(enginesuite.Lab, usesRedis|needsRace),
}

//go:embed shims/*.go.txt
var shims embed.FS

func built(r rubric.Lab, f flags) Lab {
	dir := fmt.Sprintf("%02d-%s", r.Number, r.Slug)
	shim, err := shims.ReadFile("shims/" + dir + ".go.txt")
	if err != nil {
		panic(fmt.Sprintf("course: lab %s has no shim: %v", dir, err))
	}
	return Lab{
		Lab: grader.Lab{
			Lab:            r,
			Dir:            dir,
			TestFile:       r.Slug + "_test.go",
			Shim:           string(shim),
			Fixtures:       "suites/" + r.Slug + "suite/testdata",
			InstrumentSync: f&schedulesSync != 0,
		},
		Redis: f&usesRedis != 0,
		Race:  f&needsRace != 0,
	}
}

func planned(number int, slug, title string) Lab {
	return Lab{
		Lab: grader.Lab{
			Lab: rubric.Lab{Number: number, Slug: slug, Title: title},
			Dir: fmt.Sprintf("%02d-%s", number, slug),
		},
		Planned: true,
	}
}

func init() {
	// Each built lab tells the grader which lab comes next, so passing
	// feedback can say "on to the next lab" only when there is one.
	for i := range labs {
		if i+1 < len(labs) && !labs[i+1].Planned {
			labs[i].NextLab = labs[i+1].Number
		}
	}
}

// All returns every lab in course order, planned ones included.
func All() []Lab { return append([]Lab(nil), labs...) }

// Built returns the labs that exist (not planned), in course order.
func Built() []Lab {
	var out []Lab
	for _, l := range labs {
		if !l.Planned {
			out = append(out, l)
		}
	}
	return out
}

// WithRedis returns the built labs whose suites talk to Redis.
func WithRedis() []Lab {
	var out []Lab
	for _, l := range Built() {
		if l.Redis {
			out = append(out, l)
		}
	}
	return out
}

// ErrUnknownLab is returned by Find for a name that matches no lab.
var ErrUnknownLab = errors.New("unknown lab")

// ErrPlanned is returned by Find for a lab that is registered but not
// written yet.
var ErrPlanned = errors.New("lab not available yet")

// Find resolves a built lab by number or name: "1", "01", "claim",
// "01-claim", "labs/01-claim/".
func Find(name string) (Lab, error) {
	name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSuffix(name, "/"), "labs/"))
	for _, l := range labs {
		n, err := strconv.Atoi(name)
		if (err == nil && n == l.Number) || strings.EqualFold(name, l.Slug) || strings.EqualFold(name, l.Dir) {
			if l.Planned {
				return Lab{}, fmt.Errorf("%w: lab %s is planned and not in the kit yet", ErrPlanned, l.Dir)
			}
			return l, nil
		}
	}
	var known []string
	for _, l := range Built() {
		known = append(known, l.Dir)
	}
	return Lab{}, fmt.Errorf("%w %q (known: %s; a number like 1 or a name like claim also works)", ErrUnknownLab, name, strings.Join(known, ", "))
}
