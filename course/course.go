// Package course is the kit's one registry of labs. Every other list of labs
// is derived from it: the grader's view of each lab (directory, test file,
// pristine test shim, rubric), which labs CI also runs against a real Redis
// server, which need the race detector, and the checks that labs/,
// solutions/, suites/, docs/ and the two index tables agree with it
// (CheckTree).
//
// Adding a lab means its folders, its chapter, its shim in shims/, its
// rubric in rubrics/ (make rubrics) and one line in labs below. A lab
// still to come is a planned line, which needs no folders.
package course

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fourth-outcome/labkit/diagnosis"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/rubric"
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
	// schedulesAtomic: the suite schedules the implementation's sync/atomic
	// operations (suites/syncpoint/atomic), so the grader instruments its
	// "sync/atomic" import.
	schedulesAtomic
)

// The packages outside the standard library that a lab may import.
const (
	task     = "github.com/fourth-outcome/labkit/task"
	provider = "github.com/fourth-outcome/labkit/provider"
	goRedis  = "github.com/redis/go-redis/v9"
	netHTTP  = "net/http" // lab 04: HTTP status codes and Retry-After
)

// stdImports are the standard packages every lab may import: what a lab's
// own job needs (time, contexts, errors, locks, collections, formatting,
// hashing, encoding, randomness, os for printing and process identity) and
// nothing that reads or writes memory outside Go's rules (unsafe, syscall,
// reflect, runtime/debug), starts programs (os/exec), loads code (plugin),
// reads the test machinery (testing) or parses binaries (debug/...). A lab
// whose "sync" is instrumented (schedulesSync) gets the suite's scheduled
// mutexes under that name; the import stays "sync". Likewise "sync/atomic"
// (schedulesAtomic).
var stdImports = []string{
	"bufio", "bytes", "cmp", "container/heap", "container/list", "container/ring", "context",
	"crypto/hmac", "crypto/md5", "crypto/rand", "crypto/sha1", "crypto/sha256", "crypto/sha512", "crypto/subtle",
	"encoding/base32", "encoding/base64", "encoding/binary", "encoding/hex", "encoding/json",
	"errors", "fmt", "hash", "hash/crc32", "hash/crc64", "hash/fnv", "hash/maphash",
	"io", "iter", "log", "log/slog", "maps", "math", "math/big", "math/bits", "math/rand", "math/rand/v2",
	"os", "path", "regexp", "runtime", "slices", "sort", "strconv", "strings", "sync", "sync/atomic",
	"time", "unicode", "unicode/utf16", "unicode/utf8", "unique", "weak",
}

// labs is the registry: one line per lab, in course order, with the
// packages beyond stdImports that the lab's code may import.
var labs = []Lab{
	built("01-claim", needsRace|schedulesSync|schedulesAtomic),
	built("02-redis", usesRedis|needsRace, goRedis),
	built("03-ambiguous", 0, task, provider),
	built("04-retry", needsRace|schedulesSync|schedulesAtomic, netHTTP),
	built("05-lease", needsRace|schedulesSync, task),
	built("06-fencing", needsRace|schedulesSync, task),
	built("07-deadletter", needsRace, task),
	built("08-checkpoint", needsRace, task),
	built("09-backpressure", needsRace, task),
	built("10-engine", usesRedis|needsRace, task, provider, goRedis),
}

// rubrics holds each lab's rubric as data, rubrics/DIR.json: the lab, its
// concepts and its cases with their points and explanations, as its suite
// declares them (the suite's Lab value). Keeping a copy here lets labctl
// and the grader read every rubric without linking any suite, and so
// without the testing package, miniredis or go-redis; make rubrics writes
// the copies from the suites, and TestRubricsMatchTheSuites keeps them
// equal.
//
//go:embed rubrics
var rubrics embed.FS

// signatures holds, for each lab, what each of its catalogued mistakes
// fails, signatures/DIR.json (labctl verify --write-signatures writes
// them; TestSignaturesCoverTheCatalogue keeps them to the catalogue): the
// grader diagnoses a failing run by them.
//
//go:embed signatures
var signatures embed.FS

// signaturesOf reads the lab's mistake signatures, nil when it has none.
func signaturesOf(dir string) []diagnosis.Signature {
	data, err := signatures.ReadFile("signatures/" + dir + ".json")
	if err != nil {
		return nil
	}
	var sigs []diagnosis.Signature
	if err := json.Unmarshal(data, &sigs); err != nil {
		panic(fmt.Sprintf("course: signatures/%s.json: %v", dir, err))
	}
	return sigs
}

// rubricOf reads the rubric of the lab in directory dir from rubrics. A
// lab whose rubric is not written yet gets only its number and slug, so
// that make rubrics can write it; its tests fail until then.
func rubricOf(dir string) rubric.Lab {
	data, err := rubrics.ReadFile("rubrics/" + dir + ".json")
	if err != nil {
		num, slug, _ := strings.Cut(dir, "-")
		n, _ := strconv.Atoi(num)
		return rubric.Lab{Number: n, Slug: slug}
	}
	var r rubric.Lab
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		panic(fmt.Sprintf("course: rubrics/%s.json: %v", dir, err))
	}
	if got := fmt.Sprintf("%02d-%s", r.Number, r.Slug); got != dir {
		panic(fmt.Sprintf("course: rubrics/%s.json describes lab %s", dir, got))
	}
	return r
}

//go:embed shims/*.go.txt
var shims embed.FS

// starters holds each lab's pristine starter files, starters/DIR/NAME.txt
// for labs/DIR/NAME: a copy of what the kit ships in labs/, so that the
// kit's own tests never grade a learner's work in progress (make starters
// copies labs/ here; TestStartersMatchTheFilesOnDisk keeps them equal).
//
//go:embed starters
var starters embed.FS

// starterOf reads the lab's pristine starter files from starters.
func starterOf(dir string) map[string]string {
	entries, err := starters.ReadDir("starters/" + dir)
	if err != nil {
		panic(fmt.Sprintf("course: lab %s has no pristine starter in course/starters: %v", dir, err))
	}
	files := map[string]string{}
	for _, e := range entries {
		data, err := starters.ReadFile("starters/" + dir + "/" + e.Name())
		if err != nil {
			panic(fmt.Sprintf("course: %v", err))
		}
		files[strings.TrimSuffix(e.Name(), ".txt")] = string(data)
	}
	return files
}

func built(dir string, f flags, imports ...string) Lab {
	r := rubricOf(dir)
	shim, err := shims.ReadFile("shims/" + dir + ".go.txt")
	if err != nil {
		panic(fmt.Sprintf("course: lab %s has no shim: %v", dir, err))
	}
	return Lab{
		Lab: grader.Lab{
			Lab:              r,
			Dir:              dir,
			TestFile:         r.Slug + "_test.go",
			Shim:             string(shim),
			Starter:          starterOf(dir),
			Fixtures:         "suites/" + r.Slug + "suite/testdata",
			InstrumentSync:   f&schedulesSync != 0,
			InstrumentAtomic: f&schedulesAtomic != 0,
			Imports:          slices.Sorted(slices.Values(append(slices.Clone(stdImports), imports...))),
			Signatures:       signaturesOf(dir),
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
