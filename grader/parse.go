package grader

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/fourth-outcome/labkit/rubric"
)

// event is one line of go test -json (test2json) output.
type event struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Output      string
	Elapsed     float64
	FailedBuild string
}

type caseState struct {
	started bool
	ended   bool
	action  string
	elapsed float64
	output  []string
}

type parser struct {
	lab      Lab
	labDir   string
	progress io.Writer

	cases       map[string]*caseState
	topOutput   []string // output of the top-level test outside any case
	pkgOutput   []string // output not attributed to a test
	buildOutput []string
	buildFailed bool
	pkgAction   string
	lastRunning string // the case that was running most recently
	topEnded    bool   // the top-level test reported pass or fail
}

func newParser(lab Lab, labDir string, progress io.Writer) *parser {
	return &parser{lab: lab, labDir: labDir, progress: progress, cases: map[string]*caseState{}}
}

func (p *parser) consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not test2json: go command chatter, a build error printed
			// before the JSON stream started.
			p.buildOutput = append(p.buildOutput, string(line))
			continue
		}
		p.handle(e)
	}
}

func (p *parser) caseName(test string) (string, bool) {
	prefix := p.lab.TestName + "/"
	if !strings.HasPrefix(test, prefix) {
		return "", false
	}
	name := strings.TrimPrefix(test, prefix)
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i] // a sub-subtest belongs to its case
	}
	return name, true
}

func (p *parser) handle(e event) {
	switch e.Action {
	case "build-output":
		p.buildOutput = append(p.buildOutput, strings.TrimRight(e.Output, "\n"))
		return
	case "build-fail":
		p.buildFailed = true
		return
	}
	if e.Test == "" {
		switch e.Action {
		case "output":
			p.pkgOutput = append(p.pkgOutput, strings.TrimRight(e.Output, "\n"))
			if p.lastRunning != "" {
				// A crash is printed by the runtime without a test name;
				// it belongs to the case that was running.
				if cs := p.cases[p.lastRunning]; cs != nil && !cs.ended {
					cs.output = append(cs.output, strings.TrimRight(e.Output, "\n"))
				}
			}
		case "pass", "fail", "skip":
			p.pkgAction = e.Action
			if e.FailedBuild != "" {
				p.buildFailed = true
			}
		}
		return
	}
	name, isCase := p.caseName(e.Test)
	if !isCase {
		switch e.Action {
		case "output":
			p.topOutput = append(p.topOutput, strings.TrimRight(e.Output, "\n"))
		case "pass", "fail", "skip":
			if e.Test == p.lab.TestName {
				p.topEnded = true
			}
		}
		return
	}
	cs := p.cases[name]
	if cs == nil {
		cs = &caseState{}
		p.cases[name] = cs
	}
	switch e.Action {
	case "run":
		if e.Test == p.lab.TestName+"/"+name {
			cs.started = true
			p.lastRunning = name
		}
	case "output":
		cs.output = append(cs.output, strings.TrimRight(e.Output, "\n"))
	case "pass", "fail", "skip":
		if e.Test == p.lab.TestName+"/"+name {
			cs.ended = true
			cs.action = e.Action
			cs.elapsed = e.Elapsed
			if p.progress != nil {
				mark := "ok  "
				if e.Action != "pass" {
					mark = "FAIL"
				}
				fmt.Fprintf(p.progress, "  %s %s\n", mark, name)
			}
		}
	}
}

var (
	compileErrRE = regexp.MustCompile(`^(?:\./|[^\s:]*/)?([^\s/:]+\.go):(\d+)(?::(\d+))?: (.*)$`)
	fileLineRE   = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)
	// libLogRE matches log lines a library prints on its own (go-redis's
	// "redis: 2026/11/29 10:29:30 pool.go:770: ..."), which are noise next to
	// the suite's messages.
	libLogRE = regexp.MustCompile(`^\s*\w+: \d{4}/\d\d/\d\d \d\d:\d\d:\d\d `)
)

func (p *parser) report(stderr string) *Report {
	rep := &Report{
		Lab:   p.lab.Number,
		Slug:  p.lab.Slug,
		Title: p.lab.Title,
		Total: p.lab.TotalPoints(),
	}
	allOutput := strings.Join(append(append([]string{}, p.pkgOutput...), p.topOutput...), "\n")

	if p.buildFailed || (p.pkgAction == "" && len(p.cases) == 0 && (len(p.buildOutput) > 0 || stderr != "")) {
		rep.Build = p.buildFailure(stderr)
	}
	timedOut := strings.Contains(allOutput, "panic: test timed out after")
	for _, cs := range p.cases {
		for _, l := range cs.output {
			if strings.Contains(l, "panic: test timed out after") {
				timedOut = true
			}
		}
	}
	for _, c := range p.lab.Cases {
		cr := CaseResult{Name: c.Name, Concept: c.Concept, Points: c.Points, Explanation: c.Explanation}
		cs := p.cases[c.Name]
		switch {
		case rep.Build != nil:
			cr.Status = StatusNotRun
			cr.Output = []string{"the code did not compile"}
		case cs == nil || !cs.started:
			cr.Status = StatusNotRun
		case !cs.ended:
			cr.Status = StatusNoFinish
			if timedOut {
				cr.Status = StatusTimeout
			}
		case cs.action == "pass":
			cr.Status = StatusPass
			cr.Earned = c.Points
		case cs.action == "skip":
			cr.Status = StatusSkip
		default:
			cr.Status = StatusFail
		}
		if cs != nil {
			cr.Elapsed = cs.elapsed
			out := strings.Join(cs.output, "\n")
			switch {
			case cr.Status == StatusPass:
			case cr.Status == StatusSkip && strings.Contains(out, rubric.InconclusiveMark):
				cr.Status = StatusInconclusive
			case strings.Contains(out, "WARNING: DATA RACE") || strings.Contains(out, "race detected during execution of test"):
				cr.Status = StatusRace
			case cr.Status == StatusFail && (strings.Contains(out, "panic: ") || strings.Contains(out, "[recovered]")):
				cr.Status = StatusPanic
			}
			if cr.Status != StatusPass {
				cr.Output, cr.Timeline = trimOutput(cs.output)
			}
		}
		rep.Score += cr.Earned
		rep.Cases = append(rep.Cases, cr)
	}
	rep.Passed = rep.Build == nil && rep.Score == rep.Total && len(rep.Failed()) == 0

	setup, _ := trimOutput(p.topOutput)
	switch {
	case rep.Build != nil:
	case p.topEnded && p.unfinished() == len(p.lab.Cases) && len(setup) > 0:
		rep.Problems = append(rep.Problems, "the suite stopped before its first case: "+strings.Join(setup, "\n"))
	case timedOut:
		rep.Problems = append(rep.Problems, "the suite hit its time limit: something blocked forever (a lock never released, a channel nobody sends on, a goroutine waiting on itself)")
	case p.pkgAction == "fail" && p.unfinished() > 0:
		rep.Problems = append(rep.Problems, fmt.Sprintf("the test binary stopped in the middle of the suite (%d cases never ran or never finished): a crash in a goroutine, a fatal error, or os.Exit in the code under test", p.unfinished()))
	case p.pkgAction == "" && rep.Build == nil:
		rep.Problems = append(rep.Problems, "go test produced no result for the package")
	}
	if strings.Contains(allOutput, "WARNING: DATA RACE") && !anyStatus(rep, StatusRace) {
		rep.Problems = append(rep.Problems, "the race detector found a data race outside any single case")
	}
	setupFailed := len(rep.Problems) > 0 && strings.HasPrefix(rep.Problems[0], "the suite stopped before its first case")
	if !setupFailed && (len(rep.Problems) > 0 || (p.pkgAction == "fail" && rep.Build == nil && len(rep.Failed()) == 0)) {
		if tail := lastLines(p.pkgOutput, 30); len(tail) > 0 {
			rep.Problems = append(rep.Problems, "last output:\n"+strings.Join(tail, "\n"))
		}
		if rep.Passed {
			rep.Passed = false
		}
	}
	return rep
}

func anyStatus(r *Report, s Status) bool {
	for _, c := range r.Cases {
		if c.Status == s {
			return true
		}
	}
	return false
}

func (p *parser) unfinished() int {
	n := 0
	for _, c := range p.lab.Cases {
		if cs := p.cases[c.Name]; cs == nil || !cs.ended {
			n++
		}
	}
	return n
}

func (p *parser) buildFailure(stderr string) *BuildFailure {
	var lines []string
	for _, l := range append(p.buildOutput, strings.Split(stderr, "\n")...) {
		l = strings.TrimRight(l, " \r")
		if l == "" || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "# ") {
			continue
		}
		lines = append(lines, l)
	}
	bf := &BuildFailure{}
	for _, l := range lines {
		m := compileErrRE.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		bf.Errors = append(bf.Errors, CompileError{File: m[1], Line: line, Column: col, Message: m[4]})
	}
	bf.Output = strings.Join(lastLines(lines, 40), "\n")
	if bf.Output == "" {
		bf.Output = "the package failed to build, and the go command gave no details"
	}
	return bf
}

// trimOutput turns a case's raw output into the lines worth showing (the
// failure messages, without go test's framing) and its timeline.
func trimOutput(raw []string) (out, timeline []string) {
	inTimeline := false
	for _, l := range raw {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "=== RUN") || strings.HasPrefix(t, "=== PAUSE") || strings.HasPrefix(t, "=== CONT") || strings.HasPrefix(t, "=== NAME"):
			continue
		case strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "--- PASS") || strings.HasPrefix(t, "--- SKIP"):
			continue
		case strings.HasSuffix(t, rubric.TimelineStart):
			inTimeline = true
			continue
		case t == rubric.TimelineEnd:
			inTimeline = false
			continue
		case inTimeline:
			timeline = append(timeline, t)
			continue
		case t == "", libLogRE.MatchString(l):
			continue
		}
		// Drop the framing the suite adds around every failure (the
		// report shows explanation and concept in its own words).
		msg := fileLineRE.ReplaceAllString(l, "")
		mt := strings.TrimSpace(msg)
		if strings.HasPrefix(mt, "why it matters:") || strings.HasPrefix(mt, "concept:") {
			continue
		}
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(msg, "    "), "    "))
	}
	const maxLines = 40
	if len(out) > maxLines {
		out = append(out[:maxLines], fmt.Sprintf("... %d more lines", len(out)-maxLines))
	}
	return out, timeline
}

func lastLines(lines []string, n int) []string {
	var keep []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return keep
}
