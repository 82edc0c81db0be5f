package grader

import (
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxFrames is how many goroutines a verdict names.
const maxFrames = 3

// maxKeptGoroutines caps how many goroutines with a frame in the lab's code
// one dump keeps while it is read: a dump of a million goroutines is read
// to its end, but only this many are remembered.
const maxKeptGoroutines = 256

var (
	goroutineRE = regexp.MustCompile(`^goroutine (\d+)(?: gp=\S+)?(?: m=\S+)?(?: mp=\S+)? \[([^\]]*)\]:$`)
	frameFileRE = regexp.MustCompile(`^\t(.+\.go):(\d+)(?: |$)`)
	// crashRE matches the first line of a crash the runtime prints: a
	// panic nobody recovered, or a fatal error.
	crashRE = regexp.MustCompile(`^(?:panic: |fatal error: )`)
	// syncPointRE matches a frame in an exported lock of suites/syncpoint.
	syncPointRE = regexp.MustCompile(`^` + regexp.QuoteMeta(SyncPointPackage) + `\.\(\*((?:RW)?Mutex)\)\.(R?Lock)\(`)
)

// stackScan reads the output of a test binary line by line and keeps, from
// every goroutine dump in it (a SIGQUIT dump, a crash, go test's own
// timeout), the goroutines whose stacks pass through the lab's code, and
// the crash message if there is one. It reads every line and keeps little.
type stackScan struct {
	labDir string // "labs/01-claim": frames in this directory are the student's

	crash string // the crash's first line, "panic: ...", "fatal error: ..."
	last  string // the last line of output that is not go test's framing

	inGoroutine bool
	id          int
	state       string
	pendingFunc string // the function line whose file line comes next
	syncState   string // the lock the goroutine waits on in suites/syncpoint, "sync.Mutex.Lock"
	createdBy   bool   // the function line is a "created by" line
	found       bool   // this goroutine already has its innermost student frame
	order       int    // goroutines seen so far

	kept []dumpedGoroutine
}

type dumpedGoroutine struct {
	id    int
	order int // position in the dump
	frame Frame
}

func newStackScan(labDir string) *stackScan { return &stackScan{labDir: labDir} }

// framingLine reports whether l is blank or go test's own framing ("===
// RUN", "--- FAIL", "PASS", "FAIL", "exit status 1"), not the binary's
// words.
func framingLine(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || t == "PASS" || t == "FAIL" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") ||
		strings.HasPrefix(t, "exit status ") || strings.HasPrefix(t, "FAIL\t") || strings.HasPrefix(t, "ok  \t")
}

// line reads one line of output.
func (s *stackScan) line(l string) {
	l = strings.TrimRight(l, "\r\n")
	if s.crash == "" && crashRE.MatchString(l) {
		s.crash = l
	}
	if !framingLine(l) {
		s.last = l
	}
	if m := goroutineRE.FindStringSubmatch(l); m != nil {
		s.inGoroutine = true
		s.id, _ = strconv.Atoi(m[1])
		s.state = goroutineState(m[2])
		s.pendingFunc, s.createdBy, s.found, s.syncState = "", false, false, ""
		s.order++
		return
	}
	if !s.inGoroutine {
		return
	}
	if l == "" {
		s.inGoroutine = false
		return
	}
	if !strings.HasPrefix(l, "\t") {
		s.pendingFunc = l
		s.createdBy = strings.HasPrefix(l, "created by ")
		if m := syncPointRE.FindStringSubmatch(l); m != nil && !s.found {
			// The lab's "sync" is suites/syncpoint when the suite
			// schedules its locks: a goroutine waiting for one of its
			// mutexes waits on a channel or yields in a loop, but what it
			// waits for is the lock.
			s.syncState = "sync." + m[1] + "." + m[2]
		}
		return
	}
	m := frameFileRE.FindStringSubmatch(l)
	if m == nil || s.found || s.createdBy || s.pendingFunc == "" {
		return
	}
	file, ok := s.studentFile(m[1])
	if !ok {
		return
	}
	s.found = true
	if len(s.kept) >= maxKeptGoroutines {
		return
	}
	n, _ := strconv.Atoi(m[2])
	state := s.state
	if s.syncState != "" {
		state = s.syncState
	}
	s.kept = append(s.kept, dumpedGoroutine{id: s.id, order: s.order,
		frame: Frame{File: file, Line: n, Func: shortFunc(s.pendingFunc), State: state}})
}

// studentFile reports whether a frame's file is one of the lab's own
// non-test files, and returns its name. The path is absolute (an overlay
// build), or starts with the module path (a -trimpath build).
func (s *stackScan) studentFile(p string) (string, bool) {
	p = strings.ReplaceAll(p, "\\", "/")
	dir, file := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if strings.HasSuffix(file, "_test.go") || s.labDir == "" {
		return "", false
	}
	if dir != s.labDir && !strings.HasSuffix(dir, "/"+s.labDir) {
		return "", false
	}
	return file, true
}

// hung returns the goroutines to name for a case that was stopped: up to
// maxFrames distinct places, the goroutines started last first (those of
// the case that hung, not the ones earlier cases left behind), and among
// them the spinning ones first.
func (s *stackScan) hung() []Frame {
	gs := append([]dumpedGoroutine(nil), s.kept...)
	sort.SliceStable(gs, func(i, j int) bool {
		if a, b := gs[i].frame.Spinning(), gs[j].frame.Spinning(); a != b {
			return a
		}
		return gs[i].id > gs[j].id
	})
	return distinctFrames(gs)
}

// crashed returns where the crash happened: the goroutine the runtime
// printed first (the one that panicked or hit the fatal error) if it was in
// the lab's code, then the others in dump order.
func (s *stackScan) crashed() []Frame {
	gs := append([]dumpedGoroutine(nil), s.kept...)
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].order < gs[j].order })
	return distinctFrames(gs)
}

func distinctFrames(gs []dumpedGoroutine) []Frame {
	var out []Frame
	seen := map[Frame]bool{}
	for _, g := range gs {
		if seen[g.frame] {
			continue
		}
		seen[g.frame] = true
		out = append(out, g.frame)
		if len(out) == maxFrames {
			break
		}
	}
	return out
}

// goroutineState turns the bracket of a goroutine header ("sync.Mutex.Lock,
// 2 minutes, synctest bubble 1", "chan receive (durable)") into the state
// alone ("sync.Mutex.Lock", "chan receive"): nothing that changes from run
// to run.
func goroutineState(s string) string {
	s, _, _ = strings.Cut(s, ",")
	s = strings.TrimSuffix(s, " (durable)")
	s = strings.TrimSuffix(s, " (synctest)")
	s = strings.TrimSuffix(s, " (scan)")
	return strings.TrimSpace(s)
}

// shortFunc turns a traceback's function line
// ("github.com/x/labs/01-claim.(*Store).Do(0xc000012345, ...)") into the
// function's name within its package ("Store.Do").
func shortFunc(l string) string {
	l = strings.TrimSpace(l)
	if strings.HasSuffix(l, ")") {
		// Drop the argument list: the parenthesis group that ends the line.
		depth := 0
	scan:
		for j := len(l) - 1; j >= 0; j-- {
			switch l[j] {
			case ')':
				depth++
			case '(':
				if depth--; depth == 0 {
					l = l[:j]
					break scan
				}
			}
		}
	}
	if i := strings.LastIndexByte(l, '/'); i >= 0 {
		l = l[i+1:]
	}
	if _, rest, ok := strings.Cut(l, "."); ok {
		l = rest
	}
	l = strings.ReplaceAll(l, "(*", "")
	l = strings.ReplaceAll(l, ")", "")
	l = strings.ReplaceAll(l, "[...]", "")
	return l
}

// crashMessage is the crash's first line without what changes from run to
// run: "panic: assignment to entry in nil map", with " [recovered]" and
// goroutine numbers left out.
func crashMessage(line string) string {
	line = strings.TrimSpace(line)
	for _, suffix := range []string{" [recovered, repanicked]", " [recovered]"} {
		line = strings.TrimSuffix(line, suffix)
	}
	return line
}

// clip returns s cut to at most n bytes, at a rune boundary, with "…" when
// it was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
