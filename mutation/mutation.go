// Package mutation is the kit's mutation testing of its reference
// solutions. It asks gremlins (github.com/go-gremlins/gremlins, pinned in
// tools/go.mod, outside the kit's own module) where a solution can be
// mutated (conditions, boundaries, arithmetic, logic, loop control), applies
// each mutant itself, and runs the lab's pristine suite over it through the
// grader, which knows which case failed. A mutant counts as killed only when
// it builds and a suite case fails on it: a build or setup failure is never
// a kill (gremlins, run on its own, counts some setup failures as kills).
//
// Every mutant that lives must be listed, with a one-line reason a reader can
// check, in the lab's equivalent-mutants file beside its suite
// (suites/<lab>suite/equivalent-mutants.txt); Run reports an unlisted
// survivor, and a listed entry that no longer matches a surviving mutant.
package mutation

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/workpool"
)

// Mutant is one change gremlins proposes in a solution file.
type Mutant struct {
	File    string `json:"file"` // base name, "claim.go"
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Type    string `json:"type"`    // gremlins' mutator name, "CONDITIONALS_NEGATION"
	Covered bool   `json:"covered"` // gremlins found the line covered by the suite
}

// ID is the mutant's stable name in reports and in the equivalents file:
// "claim.go:62:16 CONDITIONALS_NEGATION".
func (m Mutant) ID() string { return fmt.Sprintf("%s:%d:%d %s", m.File, m.Line, m.Column, m.Type) }

// Verdict is what the suite made of a mutant.
type Verdict string

// The verdicts. Only Killed is a success for the suite; Lived must be listed
// as equivalent; NotViable mutants (they do not compile) say nothing.
const (
	Killed    Verdict = "killed"
	Lived     Verdict = "lived"
	NotViable Verdict = "not viable"
)

// Outcome is one mutant's result.
type Outcome struct {
	Mutant
	Verdict    Verdict
	Change     string   // "== → !=" on the source line
	Source     string   // the mutated line, trimmed
	KilledBy   []string // the failing case: the suite stops at the first (Options.FailFast)
	Equivalent string   // the reason from the equivalents file, for a listed survivor
}

// ErrGremlins is wrapped by failures to run gremlins itself.
var ErrGremlins = errors.New("gremlins")

// Mutators are the gremlins mutator types the kit enables, beyond its
// defaults (arithmetic, boundaries, negated conditions, ++/--, negatives).
var Mutators = []string{"--invert-logical", "--invert-loopctrl", "--invert-assignments"}

// Discover runs gremlins in dry-run mode on the solution directory dir
// (relative to root, "solutions/01-claim") and returns the mutants it finds.
// toolsModfile is the go.mod that pins gremlins.
func Discover(ctx context.Context, root, dir, toolsModfile string) ([]Mutant, error) {
	out, err := os.CreateTemp("", "labkit-gremlins-*.json")
	if err != nil {
		return nil, err
	}
	out.Close()
	defer os.Remove(out.Name())
	args := append([]string{"tool", "-modfile=" + toolsModfile, "gremlins", "unleash", "--dry-run", "-o", out.Name()}, Mutators...)
	args = append(args, "./"+filepath.ToSlash(dir)+"/")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w on %s: %v\n%s", ErrGremlins, dir, err, lastLines(string(msg), 15))
	}
	data, err := os.ReadFile(out.Name())
	if err != nil {
		return nil, fmt.Errorf("%w: read its results: %v", ErrGremlins, err)
	}
	var res struct {
		Files []struct {
			FileName  string `json:"file_name"`
			Mutations []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
				Line   int    `json:"line"`
				Column int    `json:"column"`
			} `json:"mutations"`
		} `json:"files"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("%w: parse its results: %v", ErrGremlins, err)
	}
	var ms []Mutant
	for _, f := range res.Files {
		if name := filepath.ToSlash(f.FileName); strings.Contains(name, "/") {
			// A file in a subdirectory (a benchmark's main package,
			// say) is not the lab's package and the suite never runs it.
			continue
		}
		for _, m := range f.Mutations {
			ms = append(ms, Mutant{File: filepath.Base(f.FileName), Line: m.Line, Column: m.Column, Type: m.Type, Covered: m.Status != "NOT COVERED"})
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID() < ms[j].ID() })
	return ms, nil
}

// swaps maps a mutator and the token it finds to the token it writes.
var swaps = map[string]map[token.Token]token.Token{
	"CONDITIONALS_BOUNDARY": {token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR},
	"CONDITIONALS_NEGATION": {token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.GEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR},
	"ARITHMETIC_BASE":       {token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL},
	"INCREMENT_DECREMENT":   {token.INC: token.DEC, token.DEC: token.INC},
	"INVERT_NEGATIVES":      {token.SUB: token.ADD},
	"INVERT_LOGICAL":        {token.LAND: token.LOR, token.LOR: token.LAND},
	"INVERT_LOOPCTRL":       {token.BREAK: token.CONTINUE, token.CONTINUE: token.BREAK},
	"INVERT_ASSIGNMENTS":    {token.ADD_ASSIGN: token.SUB_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN, token.MUL_ASSIGN: token.QUO_ASSIGN, token.QUO_ASSIGN: token.MUL_ASSIGN, token.REM_ASSIGN: token.MUL_ASSIGN},
}

// ErrNoSuchToken is returned by Apply when the source has no token the
// mutator changes at the mutant's position (the source changed since
// Discover).
var ErrNoSuchToken = errors.New("no mutable token at the mutant's position")

// Apply returns src with the mutant applied, and the change made ("< → <=").
func (m Mutant) Apply(src []byte) ([]byte, string, error) {
	table, ok := swaps[m.Type]
	if !ok {
		return nil, "", fmt.Errorf("mutator %s: not supported", m.Type)
	}
	fset := token.NewFileSet()
	file := fset.AddFile(m.File, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		p := fset.Position(pos)
		if p.Line != m.Line || p.Column != m.Column {
			continue
		}
		to, ok := table[tok]
		if !ok {
			return nil, "", fmt.Errorf("%w: %s found %q", ErrNoSuchToken, m.ID(), lit+tok.String())
		}
		off := file.Offset(pos)
		from := tok.String()
		out := append(append(append([]byte{}, src[:off]...), to.String()...), src[off+len(from):]...)
		return out, from + " → " + to.String(), nil
	}
	return nil, "", fmt.Errorf("%w: %s", ErrNoSuchToken, m.ID())
}

// Equivalents are the listed surviving mutants of a lab: mutant ID to the
// reason no test can tell it from the solution.
type Equivalents map[string]string

// ReadEquivalents reads an equivalents file: one mutant a line, "ID: reason"
// (for example "retry.go:88:12 CONDITIONALS_BOUNDARY: at n = 62 both
// branches give Cap"), with # comments and blank lines. A missing file is an
// empty list; a line without a reason is an error.
func ReadEquivalents(path string) (Equivalents, error) {
	eq := Equivalents{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return eq, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// "file.go:line:col TYPE: reason": the position has colons of
		// its own, so split at the first space, then after the type.
		pos, rest, _ := strings.Cut(line, " ")
		typ, reason, ok := strings.Cut(rest, ": ")
		if !ok || strings.TrimSpace(reason) == "" || strings.Count(pos, ":") != 2 {
			return nil, fmt.Errorf("%s:%d: want \"file.go:line:col TYPE: why no test can tell it apart\"", path, n)
		}
		head := pos + " " + strings.TrimSpace(typ)
		eq[strings.TrimSpace(head)] = strings.TrimSpace(reason)
	}
	return eq, sc.Err()
}

// Options configures Run.
type Options struct {
	Root         string // the kit checkout
	ToolsModfile string // tools/go.mod, which pins gremlins
	Race         bool   // run the suites with the race detector
	Jobs         int    // mutants tested at once; 0 means 1
	Timeout      time.Duration
	Progress     func(Outcome) // called as each mutant is judged
	// ListedOnly judges only the mutants listed in the equivalents file:
	// a quick check, after a suite gained cases, that each still lives.
	// Unlisted mutants are not run, so it proves nothing about them.
	ListedOnly bool
}

// Result is a lab's mutation run.
type Result struct {
	Lab      grader.Lab
	Outcomes []Outcome
	// Problems are unlisted survivors and stale equivalents entries: each
	// makes the run fail.
	Problems []string
}

// Count returns how many outcomes have verdict v.
func (r Result) Count(v Verdict) int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Verdict == v {
			n++
		}
	}
	return n
}

// Run mutation-tests the lab's reference solution: every mutant gremlins
// finds is applied and the suite run over it through the grader.
// equivalentsPath is the lab's equivalents file.
func Run(ctx context.Context, lab grader.Lab, equivalentsPath string, o Options) (Result, error) {
	res := Result{Lab: lab}
	solution := filepath.Join(o.Root, "solutions", lab.Dir)
	eq, err := ReadEquivalents(equivalentsPath)
	if err != nil {
		return res, err
	}
	mutants, err := Discover(ctx, o.Root, filepath.Join("solutions", lab.Dir), o.ToolsModfile)
	if err != nil {
		return res, err
	}
	if o.ListedOnly {
		mutants = slices.DeleteFunc(mutants, func(m Mutant) bool { _, listed := eq[m.ID()]; return !listed })
	}
	res.Outcomes = make([]Outcome, len(mutants))
	var mu sync.Mutex
	var firstErr error
	err = workpool.Each(ctx, o.Jobs, len(mutants), func(i int) {
		out, err := judge(ctx, lab, solution, mutants[i], o)
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			return
		}
		if out.Verdict == Lived {
			out.Equivalent = eq[out.ID()]
		}
		res.Outcomes[i] = out
		if o.Progress != nil {
			mu.Lock()
			o.Progress(out)
			mu.Unlock()
		}
	})
	if firstErr != nil {
		return res, firstErr
	}
	if err != nil {
		return res, err
	}
	lived := map[string]bool{}
	for _, out := range res.Outcomes {
		if out.Verdict != Lived {
			continue
		}
		lived[out.ID()] = true
		if out.Equivalent == "" {
			res.Problems = append(res.Problems, fmt.Sprintf("%s lives (%s in %q): kill it with a sharper case, or list it in %s with the reason no test can tell it apart", out.ID(), out.Change, out.Source, rel(o.Root, equivalentsPath)))
		}
	}
	for id := range eq {
		if !lived[id] {
			res.Problems = append(res.Problems, fmt.Sprintf("%s is listed in %s but is not a surviving mutant (killed now, or the solution changed): remove or update the entry", id, rel(o.Root, equivalentsPath)))
		}
	}
	sort.Strings(res.Problems)
	return res, nil
}

func judge(ctx context.Context, lab grader.Lab, solution string, m Mutant, o Options) (Outcome, error) {
	out := Outcome{Mutant: m}
	src, err := os.ReadFile(filepath.Join(solution, m.File))
	if err != nil {
		return out, err
	}
	mutated, change, err := m.Apply(src)
	if err != nil {
		return out, err
	}
	out.Change = change
	out.Source = strings.TrimSpace(lineOf(mutated, m.Line))
	dir, err := os.MkdirTemp("", "labkit-mutant-*")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, m.File), mutated, 0o644); err != nil {
		return out, err
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = time.Minute
	}
	rep, err := grader.RunGoTest(ctx, grader.Options{Root: o.Root, Lab: lab, Base: solution, Impl: dir, Target: "mutant " + m.ID(), Race: o.Race, Timeout: timeout, FailFast: true})
	if err != nil {
		return out, err
	}
	switch {
	case rep.Build != nil:
		out.Verdict = NotViable
	case rep.Passed:
		out.Verdict = Lived
	default:
		for _, c := range rep.Failed() {
			if c.Status != grader.StatusNotRun && c.Status != grader.StatusSkip {
				out.KilledBy = append(out.KilledBy, c.Name)
			}
		}
		if len(out.KilledBy) == 0 {
			// Nothing failed that the suite checks: a suite that
			// stopped before its first case is not a kill.
			out.Verdict = Lived
		} else {
			out.Verdict = Killed
		}
	}
	return out, nil
}

func lineOf(src []byte, n int) string {
	lines := bytes.Split(src, []byte("\n"))
	if n < 1 || n > len(lines) {
		return ""
	}
	return string(lines[n-1])
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}
