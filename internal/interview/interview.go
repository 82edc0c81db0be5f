// Package interview is the body of labctl interview: it runs one drill
// (a scenario from docs/interview.md, a numbers question, or a
// find-the-bug drill on a catalogued mistake), reads the learner's answers,
// and remembers what they have done in .labkit/interview.json. labctl
// parses the flags into Options.
package interview

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/progress"
	"github.com/fourth-outcome/labkit/internal/usage"
	drill "github.com/fourth-outcome/labkit/interview"
)

// Options say which drill to run, and how.
type Options struct {
	// Root is the kit checkout.
	Root string
	// Drill is list, scenario, numbers, bug or a drill's name; "" runs
	// the next drill not done.
	Drill string
	// Reveal shows the model answer without asking for the learner's.
	Reveal bool
	// Spoilers opens the find-the-bug drills of labs not passed yet.
	Spoilers bool
	// Seed is the seed of a numbers drill (0: a new one each time).
	Seed uint64
	// ResolveRace decides whether a bug drill's timeline runs with the
	// race detector (the caller's, so that its note is said once).
	ResolveRace func() (bool, error)
	// Prog is how the learner runs labctl ("go run ./cmd/labctl").
	Prog string
	// In is where the answers are read from; Stdout and Stderr where the
	// drill writes.
	In             io.Reader
	Stdout, Stderr io.Writer
}

// drillLog is what interview remembers, in .labkit/drill.json.
type drillLog struct {
	Done map[string]drillRecord `json:"done"`
}

type drillRecord struct {
	Attempts int       `json:"attempts"`
	Last     time.Time `json:"last"`
	Score    string    `json:"score"` // "3/7" points named, "right", "wrong", "named", "missed"
}

func drillLogPath(root string) string { return filepath.Join(root, ".labkit", "interview.json") }

func loadDrillLog(root string) *drillLog {
	l := &drillLog{Done: map[string]drillRecord{}}
	if data, err := os.ReadFile(drillLogPath(root)); err == nil {
		json.Unmarshal(data, l) // a damaged log only loses the history
	}
	if l.Done == nil {
		l.Done = map[string]drillRecord{}
	}
	return l
}

// record remembers a drill's result, or says on stderr that it could not:
// the drill is done either way.
func (l *drillLog) record(o Options, root, id, score string) {
	r := l.Done[id]
	r.Attempts++
	r.Last = time.Now().UTC()
	r.Score = score
	l.Done[id] = r
	data, _ := json.MarshalIndent(l, "", "  ")
	err := os.MkdirAll(filepath.Dir(drillLogPath(root)), 0o755)
	if err == nil {
		err = os.WriteFile(drillLogPath(root), append(data, '\n'), 0o644)
	}
	if err != nil {
		progress.WarnNotSaved(o.Stderr, fmt.Sprintf("this drill's result (%s: %s)", id, score), err, fmt.Sprintf("`%s interview` may offer it again, and `interview list` does not show it", o.Prog))
	}
}

// bugDrill is a catalogued mistake as a find-the-bug drill.
type bugDrill struct {
	id  string // "bug:01-claim/check-then-insert"
	lab course.Lab
	m   grader.Mistake
}

// bugDrills lists the find-the-bug drills: every catalogued mistake of
// every built lab. A kit without solutions/ (a student release) has none.
func bugDrills(root string) ([]bugDrill, error) {
	var out []bugDrill
	for _, l := range course.Built() {
		if _, err := os.Stat(filepath.Join(root, "solutions", l.Dir)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		ms, err := grader.Mistakes(root, l.Lab)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			out = append(out, bugDrill{id: "bug:" + l.Dir + "/" + m.Name, lab: l, m: m})
		}
	}
	return out, nil
}

// Run runs the drill o names, or the next one not done, reading the
// learner's answers from o.In. An unknown drill is a usage error
// (*usage.Error).
func Run(ctx context.Context, o Options) error {
	root := o.Root
	src, err := os.ReadFile(filepath.Join(root, "docs", "interview.md"))
	if err != nil {
		return usage.Errorf("interview: the model answers live in docs/interview.md: %v", err)
	}
	answers := drill.ParseAnswers(string(src))
	all, err := bugDrills(root)
	if err != nil {
		return err
	}
	bugs, closed := all, map[int]int{}
	if !o.Spoilers {
		bugs, closed = openBugDrills(root, all)
	}
	log := loadDrillLog(root)
	in := bufio.NewReader(o.In)
	seed := o.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano() % 1_000_000)
	}

	arg := strings.ToLower(o.Drill)
	if arg == "" {
		arg = []string{"scenario", "numbers", "bug"}[len(log.Done)%3]
		if arg == "bug" && len(bugs) == 0 {
			arg = "scenario"
		}
	}
	switch arg {
	case "list":
		return listDrills(o, log, bugs, closed)
	case "scenario", "scenarios":
		s := drill.Scenarios[0]
		for _, c := range drill.Scenarios {
			if _, done := log.Done[c.ID]; !done {
				s = c
				break
			}
		}
		return scenarioDrill(o, in, log, root, answers, s)
	case "numbers", "number", "numeric":
		kind := drill.Kinds[0]
		for _, k := range drill.Kinds {
			if _, done := log.Done[k]; !done {
				kind = k
				break
			}
		}
		return numericDrill(o, in, log, root, kind, seed)
	case "bug", "bugs":
		if len(bugs) == 0 && len(all) > 0 {
			fmt.Fprintf(o.Stdout, "Find-the-bug drills open lab by lab: each shows a lab's catalogued bugs and its reference code, so a lab's drills wait until you have passed it (`%s check N`), and you have passed none yet. `%s interview --spoilers bug` opens them all.\n", o.Prog, o.Prog)
			return nil
		}
		if len(bugs) == 0 {
			fmt.Fprintln(o.Stdout, "Find-the-bug drills need the kit's solutions/ and their catalogued mistakes, which this copy of the kit does not include. Try `"+o.Prog+" interview scenario` or `"+o.Prog+" interview numbers`.")
			return nil
		}
		b := bugs[int(seed)%len(bugs)]
		for _, c := range bugs {
			if _, done := log.Done[c.id]; !done {
				b = c
				break
			}
		}
		return bugDrillRun(ctx, o, in, log, root, b)
	}
	for _, s := range drill.Scenarios {
		if arg == s.ID {
			return scenarioDrill(o, in, log, root, answers, s)
		}
	}
	for _, k := range drill.Kinds {
		if arg == k {
			return numericDrill(o, in, log, root, k, seed)
		}
	}
	for _, b := range bugs {
		if arg == b.id || arg == "bug:"+b.m.Name {
			return bugDrillRun(ctx, o, in, log, root, b)
		}
	}
	for _, b := range all {
		if arg == b.id || arg == "bug:"+b.m.Name {
			return usage.Errorf("interview: %s is a bug of lab %02d, which you have not passed: its drills open once `%s check %d` passes (or use --spoilers)", arg, b.lab.Number, o.Prog, b.lab.Number)
		}
	}
	if strings.HasPrefix(arg, "bug:") && len(all) == 0 {
		return usage.Errorf("interview: %s: find-the-bug drills need solutions/, which this copy of the kit does not include", arg)
	}
	return usage.Errorf("interview: unknown drill %q (%s interview list shows them)", arg, o.Prog)
}

// openBugDrills keeps the drills of labs the learner has passed (now or
// under earlier rules, as .labkit/state.json records) and counts the
// others per lab, unnamed: a drill's name and code spoil its lab.
func openBugDrills(root string, all []bugDrill) (open []bugDrill, closed map[int]int) {
	closed = map[int]int{}
	st, err := progress.Load(root)
	if err != nil {
		st = &progress.State{Labs: map[string]progress.LabState{}}
	}
	for _, b := range all {
		s := st.Labs[b.lab.Dir]
		if s.Passed || s.LastPass != nil {
			open = append(open, b)
		} else {
			closed[b.lab.Number]++
		}
	}
	return open, closed
}

func listDrills(o Options, log *drillLog, bugs []bugDrill, closed map[int]int) error {
	line := func(id, what string) {
		status := "not done"
		if r, ok := log.Done[id]; ok {
			status = fmt.Sprintf("done %d×, last %s", r.Attempts, r.Score)
		}
		fmt.Fprintf(o.Stdout, "  %-44s %-18s %s\n", id, status, what)
	}
	fmt.Fprintln(o.Stdout, "Scenarios (docs/interview.md):")
	for _, s := range drill.Scenarios {
		line(s.ID, s.Heading)
	}
	fmt.Fprintln(o.Stdout, "\nNumbers (--seed N for a given one):")
	for _, k := range drill.Kinds {
		line(k, "")
	}
	if len(bugs) == 0 && len(closed) == 0 {
		fmt.Fprintln(o.Stdout, "\nFind the bug: not in this copy of the kit (it needs solutions/).")
		return nil
	}
	fmt.Fprintln(o.Stdout, "\nFind the bug (catalogued mistakes of the labs you have passed):")
	for _, b := range bugs {
		line(b.id, "")
	}
	if len(closed) > 0 {
		labs := make([]int, 0, len(closed))
		for n := range closed {
			labs = append(labs, n)
		}
		sort.Ints(labs)
		fmt.Fprintln(o.Stdout, "\nNot open yet, so as not to spoil a lab (each opens when its lab passes; --spoilers opens all):")
		for _, n := range labs {
			fmt.Fprintf(o.Stdout, "  lab %02d: %d drills\n", n, closed[n])
		}
	}
	return nil
}

// readAnswer reads lines until an empty line or the end of the input.
func readAnswer(in *bufio.Reader) string {
	var lines []string
	for {
		line, err := in.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		lines = append(lines, line)
		if err != nil {
			break
		}
	}
	return strings.Join(lines, "\n")
}

func scenarioDrill(o Options, in *bufio.Reader, log *drillLog, root string, answers map[string]drill.Answer, s drill.Scenario) error {
	a, err := drill.AnswerFor(answers, s)
	if err != nil {
		return err
	}
	w := o.Stdout
	fmt.Fprintf(w, "Scenario: %s\n\nPrompt: %s\n\n", s.Heading, oneParagraph(a.Prompt))
	answer := ""
	if !o.Reveal {
		fmt.Fprintln(w, "Type your answer (two or three minutes' worth); an empty line ends it.")
		answer = readAnswer(in)
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "── Strong answer ──\n%s\n\n── Weak answer ──\n%s\n\nWhy it is weak: %s\n\n", a.Strong, a.Weak, oneParagraph(a.WhyWeak))
	fmt.Fprintln(w, "── What a strong answer names ──")
	for i, p := range s.Points {
		fmt.Fprintf(w, "  %d. %s\n", i+1, p)
	}
	if o.Reveal {
		log.record(o, root, s.ID, "revealed")
		return nil
	}
	fmt.Fprint(w, "\nWhich did your answer name? Type their numbers (e.g. 1 3), then Enter: ")
	line, _ := in.ReadString('\n')
	named := map[int]bool{}
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' || r == '\r' }) {
		if n, err := strconv.Atoi(f); err == nil && n >= 1 && n <= len(s.Points) {
			named[n] = true
		}
	}
	score := fmt.Sprintf("%d/%d", len(named), len(s.Points))
	fmt.Fprintf(w, "\nYou named %s points.", score)
	if answer == "" {
		fmt.Fprint(w, " (You typed no answer: say it aloud next time before reading the model.)")
	}
	var missed []string
	for i := range s.Points {
		if !named[i+1] {
			missed = append(missed, strconv.Itoa(i+1))
		}
	}
	if len(missed) > 0 {
		fmt.Fprintf(w, " Work on point %s next time.", strings.Join(missed, ", "))
	}
	fmt.Fprintln(w)
	log.record(o, root, s.ID, score)
	return nil
}

func numericDrill(o Options, in *bufio.Reader, log *drillLog, root, kind string, seed uint64) error {
	n, err := drill.NewNumeric(kind, seed)
	if err != nil {
		return usage.Errorf("interview: %v", err)
	}
	w := o.Stdout
	fmt.Fprintf(w, "Numbers: %s (seed %d)\n\n%s\n\nYour answer: ", kind, seed, n.Prompt)
	line, _ := in.ReadString('\n')
	ok, err := n.Check(line)
	fmt.Fprintln(w)
	switch {
	case err != nil:
		fmt.Fprintf(w, "✗ %v. The answer is %s.\n", err, n.AnswerText())
	case ok:
		fmt.Fprintf(w, "✓ Right: %s.\n", n.AnswerText())
	default:
		fmt.Fprintf(w, "✗ Not quite: the answer is %s.\n", n.AnswerText())
	}
	fmt.Fprintln(w, "Step by step:")
	for i, s := range n.Steps {
		fmt.Fprintf(w, "  %d. %s\n", i+1, s)
	}
	score := "wrong"
	if ok {
		score = "right"
	}
	log.record(o, root, kind, score)
	return nil
}

func bugDrillRun(ctx context.Context, o Options, in *bufio.Reader, log *drillLog, root string, b bugDrill) error {
	w := o.Stdout
	concept := b.lab.Concept(b.m.Concept)
	fmt.Fprintf(w, "Find the bug: lab %02d %s (%s)\n\n", b.lab.Number, b.lab.Title, b.id)
	fmt.Fprintf(w, "This is the lab's solution with one realistic bug in it, somewhere in the code below. The suite catches it under \"%s\".\n\n", concept.Title)
	fmt.Fprintln(w, patchedCode(b.m.Diff))
	if !o.Reveal {
		fmt.Fprintln(w, "Name the failure window: when exactly does it go wrong, and what has each party seen at that moment? An empty line ends your answer.")
		readAnswer(in)
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "── Model answer ──\nThe bug: %s\nThe misconception: %s\n\nThe change that introduced it:\n%s\n", oneParagraph(b.m.Summary), concept.Misconception, strings.TrimRight(b.m.Diff, "\n"))
	fmt.Fprintln(w, "\nThe timeline that exposes it (running the suite on this code)...")
	timeline, caseName, err := mistakeTimeline(ctx, o, root, b)
	switch {
	case err != nil:
		fmt.Fprintf(w, "(could not run the suite: %v)\n", err)
	case len(timeline) == 0:
		fmt.Fprintln(w, "(the failing case printed no timeline)")
	default:
		fmt.Fprintf(w, "case %s:\n", caseName)
		for _, l := range timeline {
			fmt.Fprintln(w, "    "+l)
		}
	}
	if o.Reveal {
		log.record(o, root, b.id, "revealed")
		return nil
	}
	score := "missed"
	if confirm(in, w, "\nDid your answer name that window?") {
		score = "named"
	}
	fmt.Fprintln(w)
	log.record(o, root, b.id, score)
	return nil
}

// mistakeTimeline runs the lab's suite on the mistake and returns the
// timeline of the first failing case of its concept.
func mistakeTimeline(ctx context.Context, o Options, root string, b bugDrill) ([]string, string, error) {
	race, err := o.ResolveRace()
	if err != nil {
		return nil, "", err
	}
	sol := filepath.Join(root, "solutions", b.lab.Dir)
	dir, err := b.m.Write(sol)
	if err != nil {
		return nil, "", err
	}
	rep, err := grader.RunGoTest(ctx, grader.Options{Root: root, Lab: b.lab.Lab, Base: sol, Impl: dir, Target: "mistake " + b.m.Name, Race: race, Timeout: 2 * time.Minute})
	if err != nil {
		return nil, "", err
	}
	failed := rep.Failed()
	sort.SliceStable(failed, func(i, j int) bool {
		return failed[i].Concept == b.m.Concept && failed[j].Concept != b.m.Concept
	})
	for _, c := range failed {
		if len(c.Timeline) > 0 {
			return c.Timeline, c.Name, nil
		}
	}
	if len(failed) > 0 {
		return nil, failed[0].Name, nil
	}
	return nil, "", nil
}

// patchedCode shows the code a patch produces around its changes, without
// marking which lines changed: the context and added lines of each hunk.
func patchedCode(diff string) string {
	var b strings.Builder
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "):
			fmt.Fprintf(&b, "── %s ──\n", strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/"))
		case strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "diff ") || strings.HasPrefix(l, "index "):
		case strings.HasPrefix(l, "@@"):
			b.WriteString("    ...\n")
		case strings.HasPrefix(l, "+"):
			b.WriteString("    " + l[1:] + "\n")
		case strings.HasPrefix(l, " "):
			b.WriteString("    " + l[1:] + "\n")
		}
	}
	return b.String()
}

// oneParagraph joins a Markdown paragraph's lines.
func oneParagraph(s string) string { return strings.Join(strings.Fields(s), " ") }

// confirm asks a yes/no question on out and reads the answer from in;
// only "y" or "yes" is yes.
func confirm(in *bufio.Reader, out io.Writer, question string) bool {
	io.WriteString(out, question+" [y/N] ")
	line, _ := in.ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}
