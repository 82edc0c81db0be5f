package grader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/attest"
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

// Caps on what the parser keeps. Everything is read (a goroutine dump is
// scanned to its end); only this much is remembered.
const (
	maxCaseLines  = 2000    // output lines kept per case
	maxOtherLines = 2000    // output lines kept outside any case, and of the build
	maxTailLines  = 200     // last lines kept of the package's output
	maxLineBytes  = 1 << 20 // bytes kept of one line
)

type caseState struct {
	startedAt time.Time
	started   bool
	ended     bool
	action    string
	elapsed   float64
	output    []string
	dropped   int // output lines not kept

	// Seen anywhere in the case's output, kept or not: the race
	// detector's report, which the runtime prints, not the suite.
	race bool

	attempt int  // the run of the test binary the case ended in
	signed  bool // the suite attested its pass in that run
	// record is what the suite said of the case, as data, in the run it
	// ended in (signed when the run had a key): its timeline, seed, and
	// whether it was inconclusive or recovered a panic.
	record *attest.Record

	// verdict is set for a case the test binary did not finish (it was
	// stopped, it crashed, it exited): the status and the lines that say
	// why, shown before the case's own output.
	verdict Status
	note    []string
	where   []Frame
	scan    *stackScan
}

// attemptState is what the parser knows of the current run of the test
// binary; each rerun starts a new one.
type attemptState struct {
	n           int
	topOutput   []string // output of the top-level test outside any case
	pkgOutput   []string // output not attributed to a test (the last maxTailLines)
	pkgAction   string
	lastRunning string // the case that was running most recently
	topEnded    bool   // the top-level test reported pass or fail
	started     int    // cases that started in this run
	ended       int    // cases that ended in this run
	closed      bool   // endAttempt has seen this run
	scan        *stackScan
	signed      map[string]bool // the tests the suite attested in this run
}

type parser struct {
	lab      Lab
	labDir   string
	progress io.Writer

	cases       map[string]*caseState
	buildOutput []string
	buildFailed bool
	// buildPaths maps the cache copies the compiler names (see
	// buildOverlay) to the files they stand for.
	buildPaths map[string]string
	// sources is the code under test, to place a goroutine's frame on
	// the right line when the traceback's is wrong.
	sources     *sources
	raceOutside bool // a data race reported outside any case

	at  attemptState
	key []byte // the current run's attestation key, nil when the suite does not sign
	// partial holds, by test, the start of a line of output that test2json
	// cut into several events (see handle).
	partial map[string]string

	// problems and notRun are set as runs end: run-wide problems, and why
	// the cases that never ran did not.
	problems []string
	notRun   string
	limit    string // the first resource limit a run hit
	tampered string // why the output is not the suite's own, "" when it is
	attempts int    // runs of the test binary

	// clock says which case is running and since when, for the per-case
	// budget; it is read from another goroutine.
	clock struct {
		sync.Mutex
		running string
		since   time.Time
	}
}

func newParser(lab Lab, labDir string, progress io.Writer) *parser {
	p := &parser{lab: lab, labDir: labDir, progress: progress, cases: map[string]*caseState{}}
	p.at = attemptState{scan: newStackScan(p.labRel())}
	return p
}

// labRel is the lab's directory as it appears at the end of a source path
// in a traceback: "labs/01-claim".
func (p *parser) labRel() string { return "labs/" + p.lab.Dir }

// newAttempt starts the state of another run of the test binary, signed
// with key (nil when the suite does not sign).
func (p *parser) newAttempt(key []byte) {
	p.attempts++
	p.at = attemptState{n: p.attempts, scan: newStackScan(p.labRel())}
	p.key = key
	p.clock.Lock()
	p.clock.running, p.clock.since = "", time.Time{}
	p.clock.Unlock()
}

// running returns the case running now and since when ("" when none);
// the time is zero until a case has started in this run.
func (p *parser) running() (string, time.Time) {
	p.clock.Lock()
	defer p.clock.Unlock()
	return p.clock.running, p.clock.since
}

// consume reads a test2json stream to its end. Lines of any length are
// read; a line is kept up to maxLineBytes.
func (p *parser) consume(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLineBytes {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 {
			p.consumeLine(bytes.TrimRight(line, "\r\n"))
		}
		line = line[:0]
		if err != nil {
			p.flushPartial()
			return
		}
	}
}

func (p *parser) consumeLine(line []byte) {
	var e event
	if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
		// Not test2json: go command chatter, a build error printed
		// before the JSON stream started.
		p.buildOutput = keepFirst(p.buildOutput, string(line), maxOtherLines)
		return
	}
	p.handle(e)
}

func keepFirst(lines []string, l string, max int) []string {
	if len(lines) >= max {
		return lines
	}
	return append(lines, l)
}

func keepLast(lines []string, l string, max int) []string {
	if len(lines) >= 2*max {
		lines = append(lines[:0], lines[len(lines)-max+1:]...)
	}
	return append(lines, l)
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

// caseOutput adds a line to a case's output.
func (p *parser) caseOutput(cs *caseState, l string) {
	if cs.scan == nil {
		cs.scan = newStackScan(p.labRel())
	}
	cs.scan.line(l)
	if strings.Contains(l, "WARNING: DATA RACE") || strings.Contains(l, "race detected during execution of test") {
		cs.race = true
	}
	if len(cs.output) < maxCaseLines {
		cs.output = append(cs.output, l)
	} else {
		cs.dropped++
	}
}

// checkAttestation reads the suite's record of a case (package attest) and,
// in a signed run, records a valid attestation of its pass. A pass counts
// only when it was signed in the run the case ran in. In a signed run, a
// line that carries the attestation prefix with a signature that is not the
// suite's, or a valid attestation seen a second time in one run, is
// tampering: the suite signs each case once per run, and only code under
// test could print anything else. A run without a key (labctl check on the
// learner's own machine) has unsigned records, read as they are.
func (p *parser) checkAttestation(l string) {
	if !strings.Contains(l, attest.Prefix) {
		return
	}
	var r attest.Result
	if p.key != nil {
		r = attest.Verify(p.key, l)
	} else {
		r = attest.Read(l)
	}
	switch r.Kind {
	case attest.Invalid:
		if p.key != nil {
			p.tamper("a line carries an attestation the suite did not sign")
		}
		return
	case attest.None:
		return
	}
	if p.at.signed == nil {
		p.at.signed = map[string]bool{}
	}
	if p.at.signed[r.Test] {
		if p.key != nil {
			p.tamper("the suite's attestation of " + r.Test + " appears twice in one run")
		}
		return
	}
	p.at.signed[r.Test] = true
	name, isCase := p.caseName(r.Test)
	if !isCase || r.Test != p.lab.TestName+"/"+name {
		return
	}
	cs := p.cases[name]
	if cs == nil || !cs.ended || cs.attempt != p.at.n || cs.verdict != "" {
		return
	}
	if cs.action == "pass" && !r.Passed {
		// The suite's verdict is not the one the stream reports: the
		// framing was rewritten.
		if p.key != nil {
			p.tamper("case " + name + " is reported passed but the suite signed it failed")
		}
		return
	}
	rec := r.Record
	cs.record = &rec
	cs.signed = p.key != nil && r.Passed
}

// tamper records the first sign of tampering with the run's output.
func (p *parser) tamper(why string) {
	if p.tampered == "" {
		p.tampered = why
	}
}

// handle takes one event. test2json cuts a long line of output into
// events of at most 1 KiB, only the last ending in a newline; the pieces of
// one test's line are joined before anything reads the line (a suite's
// record of a case with a timeline is such a line).
func (p *parser) handle(e event) {
	if e.Action == "output" {
		if pend, ok := p.partial[e.Test]; ok {
			delete(p.partial, e.Test)
			e.Output = pend + e.Output
		}
		if !strings.HasSuffix(e.Output, "\n") && len(e.Output) < maxLineBytes {
			if p.partial == nil {
				p.partial = map[string]string{}
			}
			p.partial[e.Test] = e.Output
			return
		}
	} else if pend, ok := p.partial[e.Test]; ok {
		delete(p.partial, e.Test)
		p.handleEvent(event{Action: "output", Package: e.Package, Test: e.Test, Output: pend})
	}
	p.handleEvent(e)
}

// flushPartial takes the pieces of lines that no newline ended: the run's
// output stopped in the middle of a line.
func (p *parser) flushPartial() {
	for test, pend := range p.partial {
		delete(p.partial, test)
		p.handleEvent(event{Action: "output", Test: test, Output: pend})
	}
}

func (p *parser) handleEvent(e event) {
	switch e.Action {
	case "build-output":
		p.buildOutput = keepFirst(p.buildOutput, strings.TrimRight(e.Output, "\n"), maxOtherLines)
		return
	case "build-fail":
		p.buildFailed = true
		return
	}
	out := strings.TrimRight(e.Output, "\n")
	if sanitizerNoiseRE.MatchString(out) {
		return // the race runtime, which finds no /proc in the sandbox
	}
	if e.Action == "output" {
		// Wherever test2json puts a line (a case's output, the top-level
		// test's, the package's), an attestation in it is checked: the
		// suite's own are the top-level test's, and a forged one may be
		// framed as any test's.
		p.checkAttestation(out)
	}
	if e.Test == "" {
		switch e.Action {
		case "output":
			p.at.pkgOutput = keepLast(p.at.pkgOutput, out, maxTailLines)
			if strings.Contains(out, "WARNING: DATA RACE") {
				p.raceOutside = true
			}
			if cs := p.runningCase(); cs != nil {
				// A crash is printed by the runtime without a test name;
				// it belongs to the case that was running.
				p.caseOutput(cs, out)
			} else {
				p.at.scan.line(out)
			}
		case "pass", "fail", "skip":
			p.at.pkgAction = e.Action
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
			p.at.topOutput = keepFirst(p.at.topOutput, out, maxOtherLines)
			if cs := p.runningCase(); cs != nil {
				p.caseOutput(cs, out)
			} else {
				p.at.scan.line(out)
			}
		case "pass", "fail", "skip":
			if e.Test == p.lab.TestName {
				p.at.topEnded = true
			}
		}
		return
	}
	cs := p.cases[name]
	if cs == nil {
		cs = &caseState{}
		p.cases[name] = cs
	}
	if cs.verdict != "" {
		return // decided in an earlier run: what this run says of it is not its
	}
	switch e.Action {
	case "run":
		if e.Test == p.lab.TestName+"/"+name {
			cs.started, cs.startedAt = true, time.Now()
			p.at.started++
			p.at.lastRunning = name
			p.clock.Lock()
			p.clock.running, p.clock.since = name, time.Now()
			p.clock.Unlock()
		}
	case "output":
		p.caseOutput(cs, out)
	case "pass", "fail", "skip":
		if e.Test == p.lab.TestName+"/"+name {
			cs.ended = true
			cs.action = e.Action
			cs.elapsed = e.Elapsed
			cs.attempt = p.at.n
			p.at.ended++
			p.clock.Lock()
			if p.clock.running == name {
				p.clock.running = ""
			}
			p.clock.Unlock()
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

// runningCase is the case that started in this run and has not ended.
func (p *parser) runningCase() *caseState {
	if p.at.lastRunning == "" {
		return nil
	}
	if cs := p.cases[p.at.lastRunning]; cs != nil && cs.started && !cs.ended && cs.verdict == "" {
		return cs
	}
	return nil
}

var (
	compileErrRE = regexp.MustCompile(`^(?:\./|[^\s:]*/)?([^\s/:]+\.go):(\d+)(?::(\d+))?: (.*)$`)
	fileLineRE   = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)
	// libLogRE matches log lines a library prints on its own (go-redis's
	// "redis: 2026/11/29 10:29:30 pool.go:770: ..."), which are noise next to
	// the suite's messages.
	libLogRE = regexp.MustCompile(`^\s*\w+: \d{4}/\d\d/\d\d \d\d:\d\d:\d\d `)
	// sanitizerNoiseRE matches the race runtime's warning, at its start,
	// that it could not read its executable's name from /proc.
	sanitizerNoiseRE = regexp.MustCompile(`^==\d+==WARNING: reading executable name failed`)
)

// runEnd says how one run of the test binary ended, beyond its output.
type runEnd struct {
	hung   string        // the case the grader stopped for running past its budget
	budget time.Duration // that budget
	// runLimit, when set, says the case was stopped because the run's
	// whole time limit (this long) was used up, not its own budget.
	runLimit time.Duration
	limit    string // the resource limit that stopped the run, "" when none
	exited   bool   // the binary exited with status 0
	// initHung, when set, is the budget within which the binary started
	// no case, and was stopped for it.
	initHung time.Duration
}

// endAttempt closes the current run of the test binary: the case it was
// running when it ended (stopped, crashed, exited) gets that verdict. It
// reports whether the run made progress, that is whether some case got a
// verdict in it; when it made none and cases are left, they will not run,
// and the reason is recorded for them.
func (p *parser) endAttempt(end runEnd) (progress bool) {
	p.at.closed = true
	// The binary's own exit status decides the package result.
	p.at.pkgAction = "fail"
	if end.exited {
		p.at.pkgAction = "pass"
	}
	if end.limit != "" && p.limit == "" {
		p.limit = end.limit
	}
	if cs := p.runningCase(); cs != nil && end.hung != "" && end.hung != p.at.lastRunning {
		// The case the binary was stopped for ended just before the
		// signal: this one had only begun, and runs again.
		delete(p.cases, p.at.lastRunning)
		p.at.started--
	} else if cs != nil {
		name := p.at.lastRunning
		crash := cs.scan.crash
		switch {
		case end.hung == name && end.runLimit > 0:
			cs.verdict = StatusTimeout
			cs.where = p.placed(cs.scan.hung())
			cs.note = hungNote(fmt.Sprintf("did not finish before the run's time limit (%s) was used up", end.runLimit), cs.where)
		case end.hung == name:
			cs.verdict = StatusTimeout
			cs.where = p.placed(cs.scan.hung())
			cs.note = hungNote(fmt.Sprintf("did not finish within %s", rubric.Budget(name, end.budget)), cs.where)
		case strings.HasPrefix(crash, "panic: test timed out after "):
			cs.verdict = StatusTimeout
			cs.where = p.placed(cs.scan.hung())
			cs.note = hungNote("did not finish before the run's time limit", cs.where)
		case end.limit != "":
			cs.verdict = StatusNoFinish
			cs.note = []string{"stopped: the run hit its " + end.limit + " limit while this case ran"}
		case crash != "":
			cs.verdict = StatusCrash
			if where := p.placed(cs.scan.crashed()); len(where) > 0 {
				cs.where = where[:1]
			}
			cs.note = crashNote(crash, cs.where)
			if outsideBubble(crash) {
				cs.verdict, cs.note = StatusInconclusive, outsideBubbleNote(cs.note[0])
			}
		default:
			cs.verdict = StatusNoFinish
			cs.note = []string{"the test binary exited in the middle of this case (os.Exit in the code under test?)"}
		}
		cs.ended, cs.attempt = true, p.at.n
		cs.elapsed = time.Since(cs.startedAt).Seconds()
		p.at.ended++
		if p.progress != nil {
			fmt.Fprintf(p.progress, "  FAIL %s (%s)\n", name, cs.verdict)
		}
	}
	if cs := p.cases[p.at.lastRunning]; cs != nil && p.at.scan.crash != "" && cs.verdict == "" &&
		cs.ended && cs.attempt == p.at.n && cs.action == "fail" {
		// The case failed and then the binary crashed: the testing package
		// reports a test's panic (a synctest deadlock, say) as a failure
		// and then panics again, with no test name on the trace.
		cs.verdict = StatusCrash
		cs.where = firstFrame(p.placed(p.at.scan.crashed()))
		cs.note = crashNote(p.at.scan.crash, cs.where)
		if outsideBubble(p.at.scan.crash) {
			cs.verdict, cs.note = StatusInconclusive, outsideBubbleNote(cs.note[0])
		}
		if p.progress != nil {
			fmt.Fprintf(p.progress, "  (%s crashed the test binary)\n", p.at.lastRunning)
		}
	}
	progress = p.at.ended > 0
	if !progress && p.unfinished() > 0 && p.notRun == "" {
		p.notRun = p.stopReason(end)
		if !p.setupFailed() {
			p.problems = append(p.problems, fmt.Sprintf("%d case(s) never ran: %s", p.unfinished(), p.notRun))
		}
	}
	return progress
}

// stopReason says why a run that made no progress did not reach the cases
// that are left.
func (p *parser) stopReason(end runEnd) string {
	crash := p.at.scan.crash
	switch {
	case end.initHung > 0:
		s := fmt.Sprintf("crashed in init: the test binary started no case within %s and was stopped", end.initHung)
		if where := p.placed(p.at.scan.hung()); len(where) > 0 {
			s += ": " + where[0].String()
		}
		return s
	case end.limit != "":
		return "the run hit its " + end.limit + " limit before the suite reached this case"
	case strings.HasPrefix(crash, "panic: test timed out after "):
		return "the run's time limit was used up before the suite reached this case"
	case crash != "":
		return strings.TrimPrefix(crashNote(crash, firstFrame(p.placed(p.at.scan.crashed())))[0], "crashed: ") + ": the test binary crashed before the suite reached this case"
	case p.setupFailed():
		return "the suite stopped before its first case"
	case p.at.pkgAction == "pass":
		return "the test binary exited with success before the suite reached this case (os.Exit in the code under test?)"
	default:
		s := "the test binary stopped before the suite reached this case (a crash, a fatal error or os.Exit in the code under test)"
		if last := p.at.scan.last; last != "" {
			s += fmt.Sprintf("; its last output: %q", clip(last, 200))
		}
		return s
	}
}

// stopForTime records that the run's time limit was used up with cases
// left to run.
func (p *parser) stopForTime(limit time.Duration) {
	if p.unfinished() == 0 || p.notRun != "" {
		return
	}
	p.notRun = fmt.Sprintf("the run's time limit (%s) was used up before the suite reached this case", limit)
	p.problems = append(p.problems, fmt.Sprintf("%d case(s) never ran: %s", p.unfinished(), p.notRun))
}

// stopAtFailure ends a fail-fast run (Options.FailFast) once a case has
// failed: the cases left are not run, and that is no problem of the run.
// It reports whether some case failed.
func (p *parser) stopAtFailure() bool {
	for _, cs := range p.cases {
		if cs.ended && (cs.action == "fail" || cs.verdict != "") {
			if p.notRun == "" {
				p.notRun = "the run stopped at its first failing case (fail-fast)"
			}
			return true
		}
	}
	return false
}

func firstFrame(fs []Frame) []Frame {
	if len(fs) > 1 {
		return fs[:1]
	}
	return fs
}

// hungNote is the lines of a case that was stopped: head, then where its
// goroutines were in the lab's code.
func hungNote(head string, where []Frame) []string {
	if len(where) == 0 {
		return []string{head + " (when it was stopped, none of its goroutines was in the lab's own code)"}
	}
	out := []string{head + ": " + where[0].String()}
	for _, f := range where[1:] {
		out = append(out, "  and "+f.String())
	}
	return out
}

// crashNote is the line of a case during which the test binary crashed:
// the crash and where the lab's code was, "crashed: panic: assignment to
// entry in nil map at claim.go:19 (Store.Do.func1)", or for a goroutine
// that was waiting (a deadlock) "...: blocked in chan receive at ...".
func crashNote(crash string, where []Frame) []string {
	l := "crashed: " + crashMessage(crash)
	if len(where) > 0 {
		f := where[0]
		if !f.Spinning() {
			l += ": blocked in " + f.State
		}
		l += fmt.Sprintf(" at %s:%d (%s)", f.File, f.Line, f.Func)
	}
	return []string{l}
}

// outsideBubble reports whether a crash is the runtime refusing code that
// ran outside the case's testing/synctest bubble a channel, timer or lock
// made inside it ("fatal error: close of synctest channel from outside
// bubble"): the callback of a runtime.AddCleanup or runtime.SetFinalizer,
// which the runtime runs on a goroutine of its own. Such code may be
// right; the harness, which runs every case in a bubble, cannot run it.
func outsideBubble(crash string) bool {
	return strings.Contains(crash, "synctest") && strings.Contains(crash, "outside bubble")
}

// outsideBubbleNote is the output of a case that crashed outside its
// bubble: what the harness could not run, why, and what to write instead.
func outsideBubbleNote(crashed string) []string {
	return []string{
		"not exercised: the suite cannot run this code, which may well be right (" + crashed + ")",
		"Code ran outside the case's bubble and touched a channel, timer or lock made inside it. The suite runs every case in a testing/synctest bubble, where time is virtual, and Go stops the program when a goroutine outside the bubble (the one that runs runtime.AddCleanup and runtime.SetFinalizer callbacks) closes or uses what belongs to it.",
		"To be graded, stop background goroutines without a cleanup or finalizer: give the type a Close method (the suite calls Close when a case ends), or let each goroutine end when its work is done.",
	}
}

// remaining returns, in suite order, the cases that have no verdict yet.
func (p *parser) remaining() []string {
	var out []string
	for _, c := range p.lab.Cases {
		if cs := p.cases[c.Name]; cs == nil || !cs.ended {
			out = append(out, c.Name)
		}
	}
	return out
}

// setupFailed reports whether the current run's top-level test ended
// before any case started, saying why.
func (p *parser) setupFailed() bool {
	if !p.at.topEnded || p.at.started > 0 {
		return false
	}
	setup := trimOutput(p.at.topOutput)
	return len(setup) > 0
}

// beforeDump returns a case's output up to the first line of a goroutine
// dump or crash: what the suite printed, never the runtime's traceback.
func beforeDump(lines []string) []string {
	for i, l := range lines {
		if crashRE.MatchString(l) || l == "SIGQUIT: quit" || goroutineRE.MatchString(l) || strings.HasPrefix(l, "[signal ") {
			return lines[:i]
		}
	}
	return lines
}

func (p *parser) report(stderr string) *Report {
	rep := &Report{
		Lab:   p.lab.Number,
		Slug:  p.lab.Slug,
		Title: p.lab.Title,
		Total: p.lab.TotalPoints(),
	}
	if p.buildFailed || (p.at.pkgAction == "" && len(p.cases) == 0 && (len(p.buildOutput) > 0 || stderr != "")) {
		rep.Build = p.buildFailure(stderr)
	}
	setupFailed := rep.Build == nil && p.setupFailed()
	if rep.Build == nil && p.at.pkgAction != "" && !p.at.closed {
		// A stream parsed on its own: its end is the run's end.
		p.endAttempt(runEnd{exited: p.at.pkgAction == "pass"})
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
			if p.notRun != "" {
				cr.Output = []string{"not run: " + p.notRun}
			}
		case cs.verdict != "":
			cr.Status = cs.verdict
		case !cs.ended:
			cr.Status = StatusNoFinish
		case cs.action == "pass":
			cr.Status = StatusPass
		case cs.action == "skip":
			cr.Status = StatusSkip
		default:
			cr.Status = StatusFail
		}
		if cs != nil && cs.started && rep.Build == nil {
			cr.Elapsed = cs.elapsed
			switch {
			case cr.Status == StatusPass:
			case cr.Status == StatusSkip && cs.record != nil && cs.record.Inconclusive != "":
				cr.Status = StatusInconclusive
			case cs.race && cr.Status != StatusTimeout:
				cr.Status = StatusRace
			case cr.Status == StatusFail && cs.record != nil && cs.record.Panicked:
				cr.Status = StatusPanic
			}
			if cr.Status != StatusPass {
				out := trimOutput(beforeDump(cs.output))
				if r := cs.record; r != nil {
					if r.Seed != nil && cr.Status != StatusSkip {
						out = append(out, fmt.Sprintf("seed: %d (replay with: %s)", *r.Seed, r.Replay))
					}
					if len(r.Timeline) > 0 {
						cr.Timeline, cr.Clock = r.Timeline, r.Clock
					}
				}
				cr.Output = append(append([]string{}, cs.note...), out...)
				cr.Where = cs.where
			}
		}
		rep.Cases = append(rep.Cases, cr)
	}

	switch {
	case rep.Build != nil:
	case setupFailed:
		setup := trimOutput(p.at.topOutput)
		rep.Problems = append(rep.Problems, "the suite stopped before its first case: "+strings.Join(setup, "\n"))
	case p.at.pkgAction == "":
		rep.Problems = append(rep.Problems, "go test produced no result for the package")
	}
	if rep.Build == nil {
		rep.Problems = append(rep.Problems, p.problems...)
	}
	if p.raceOutside && !anyStatus(rep, StatusRace) {
		rep.Problems = append(rep.Problems, "the race detector found a data race outside any single case")
	}
	if rep.Build == nil && !setupFailed && (len(rep.Problems) > 0 || (p.at.pkgAction == "fail" && len(rep.Failed()) == 0)) {
		if tail := lastLines(beforeDump(p.at.pkgOutput), 30); len(tail) > 0 {
			rep.Problems = append(rep.Problems, "last output:\n"+strings.Join(tail, "\n"))
		}
		rep.Unclean = true
	}
	rep.Limit = p.limit
	rep.Tampered = p.tampered
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

// unfinished is how many cases have no verdict yet.
func (p *parser) unfinished() int { return len(p.remaining()) }

func (p *parser) buildFailure(stderr string) *BuildFailure {
	var lines []string
	for _, l := range append(p.buildOutput, strings.Split(stderr, "\n")...) {
		l = strings.TrimRight(l, " \r")
		for cp, file := range p.buildPaths {
			l = strings.ReplaceAll(l, cp, file)
		}
		l = unInstrument(l, p.lab)
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

// trimOutput turns a case's raw output into the lines worth showing: the
// failure messages, without go test's framing. What the suite says of the
// case as data (its timeline, its seed) comes in its record.
func trimOutput(raw []string) []string {
	var out []string
	for _, l := range raw {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "=== RUN") || strings.HasPrefix(t, "=== PAUSE") || strings.HasPrefix(t, "=== CONT") || strings.HasPrefix(t, "=== NAME"):
			continue
		case strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "--- PASS") || strings.HasPrefix(t, "--- SKIP"):
			continue
		case t == "", libLogRE.MatchString(l):
			continue
		}
		msg := fileLineRE.ReplaceAllString(l, "")
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(msg, "    "), "    "))
	}
	const maxLines = 40
	if len(out) > maxLines {
		out = append(out[:maxLines], fmt.Sprintf("... %d more lines", len(out)-maxLines))
	}
	return out
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

// unInstrument puts back, in a line of compiler output, the import paths
// the grader changed in the learner's files (see instrumentSync): the
// learner wrote "sync/atomic", and an unused import is theirs to remove
// under that name.
func unInstrument(l string, lab Lab) string {
	for std, to := range instrumented(lab) {
		q, stdq := strconv.Quote(to), strconv.Quote(std)
		l = strings.ReplaceAll(l, q+" imported as "+path.Base(std)+" and not used", stdq+" imported and not used")
		l = strings.ReplaceAll(l, q, stdq)
	}
	return l
}
