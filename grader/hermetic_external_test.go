package grader_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/fourth-outcome/labkit/grader"
)

// testKit is one scratch copy of the kit shared by the hermetic tests.
var testKit = sync.OnceValues(func() (*Kit, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return nil, err
	}
	return NewKit(root, "")
})

func hermeticKit(tb testing.TB) *Kit {
	tb.Helper()
	k, err := testKit()
	if err != nil {
		tb.Fatalf("NewKit() error = %v", err)
	}
	return k
}

// TestMain removes the shared scratch kit after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if k, err := testKit(); err == nil && k != nil {
		k.Close()
	}
	os.Exit(code)
}

// testSandbox is the sandbox the hermetic tests use: bwrap where it works.
func testSandbox(tb testing.TB) Sandbox {
	tb.Helper()
	sb, _, err := ResolveSandbox("auto")
	if err != nil {
		tb.Fatal(err)
	}
	return sb
}

func gradeHermetic(t *testing.T, opts Options) *Report {
	t.Helper()
	opts.Kit = hermeticKit(t)
	if opts.Sandbox == "" {
		opts.Sandbox = testSandbox(t)
	}
	return grade(t, opts)
}

func TestNewKitHasNoSolutions(t *testing.T) {
	k := hermeticKit(t)
	for _, dir := range []string{"solutions", "cmd", "grader", "course"} {
		if _, err := os.Stat(filepath.Join(k.Dir, dir)); err == nil {
			t.Errorf("scratch kit has %s/, want it left out", dir)
		}
	}
	for _, dir := range []string{"suites/claimsuite", "labs/01-claim", "fakeclock"} {
		if _, err := os.Stat(filepath.Join(k.Dir, dir)); err != nil {
			t.Errorf("scratch kit lacks %s: %v", dir, err)
		}
	}
	if k.Commit == "" {
		t.Error("Kit.Commit is empty, want a commit or \"unknown\"")
	}
}

func TestHermeticSolutionAndStarter(t *testing.T) {
	t.Parallel()
	root := kitRoot(t)
	sol := gradeHermetic(t, Options{Impl: filepath.Join(root, "solutions", "01-claim"), Race: raceOK()})
	if !sol.Passed || sol.Score() != sol.Total {
		t.Errorf("solution: score %d/%d, problems %q, want a pass", sol.Score(), sol.Total, sol.Problems)
	}
	if sol.Kit == "" || sol.Sandbox == "" {
		t.Errorf("solution report: Kit = %q, Sandbox = %q, want both set", sol.Kit, sol.Sandbox)
	}
	starter := t.TempDir() // the starter as the kit ships it, not labs/, which may hold work
	if err := WriteStarter(starter, claimLab(t)); err != nil {
		t.Fatal(err)
	}
	st := gradeHermetic(t, Options{Impl: starter, Race: raceOK()})
	if st.Build != nil || st.Score() != 0 || len(st.Failed()) != len(st.Cases) {
		t.Errorf("starter: score %d/%d, build %v, want every case failing", st.Score(), st.Total, st.Build)
	}
}

// TestHermeticHostileSubmissions grades the hostile submissions in the
// scratch kit, under the sandbox when there is one.
func TestHermeticHostileSubmissions(t *testing.T) {
	tests := []struct {
		name   string
		limits Limits
		check  func(t *testing.T, rep *Report)
	}{
		{"imports-solution", Limits{}, func(t *testing.T, rep *Report) {
			if rep.Build == nil || !strings.Contains(rep.Build.Output, "may not use") {
				t.Errorf("Build = %+v, want the forbidden import named", rep.Build)
			}
		}},
		{"huge-output", Limits{Output: 4 << 20}, func(t *testing.T, rep *Report) {
			if !strings.HasPrefix(rep.Limit, "output") {
				t.Errorf("Limit = %q, problems %q, want the output limit", rep.Limit, rep.Problems)
			}
		}},
		{"big-alloc", Limits{Memory: 512 << 20}, func(t *testing.T, rep *Report) {
			if !strings.HasPrefix(rep.Limit, "memory") {
				t.Errorf("Limit = %q, problems %q, want the memory limit", rep.Limit, rep.Problems)
			}
		}},
		{"os-exit-0-init", Limits{}, func(t *testing.T, rep *Report) {
			if statuses(rep)[StatusNotRun] != len(rep.Cases) || len(rep.Problems) == 0 {
				t.Errorf("statuses = %v, problems %q, want every case not run and the exit explained", statuses(rep), rep.Problems)
			}
		}},
		{"os-exit-1", Limits{}, func(t *testing.T, rep *Report) {
			if statuses(rep)[StatusNoFinish] != len(rep.Cases) {
				t.Errorf("statuses = %v, want every case did-not-finish, each in its own run", statuses(rep))
			}
		}},
		{"build-error", Limits{}, func(t *testing.T, rep *Report) {
			if rep.Build == nil || len(rep.Build.Errors) == 0 || rep.Build.Errors[0].File != "claim.go" {
				t.Fatalf("Build = %+v, want compile errors in claim.go", rep.Build)
			}
			if strings.Contains(rep.Build.Output, "run-") || strings.Contains(rep.Build.Output, os.TempDir()) {
				t.Errorf("build output shows scratch paths: %s", rep.Build.Output)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := gradeHermetic(t, Options{Impl: submission(tt.name), Limits: tt.limits, Timeout: 30 * time.Second})
			if rep.Passed || rep.Score() != 0 {
				t.Fatalf("%s: score %d/%d, want 0", tt.name, rep.Score(), rep.Total)
			}
			tt.check(t, rep)
		})
	}
}

// TestHermeticWritesStayInScratch grades a correct store whose init writes
// into the kit checkout, /tmp and $HOME: none of those files may appear.
func TestHermeticWritesStayInScratch(t *testing.T) {
	t.Parallel()
	root := kitRoot(t)
	home, _ := os.UserHomeDir()
	tag := fmt.Sprintf("labkit-hostile-%d", time.Now().UnixNano())
	targets := []string{
		filepath.Join(root, "suites", "claimsuite", tag+".go"),
		filepath.Join(root, "labs", "01-claim", tag+".go"),
		filepath.Join(os.TempDir(), tag),
		filepath.Join(home, tag),
		"../../suites/claimsuite/" + tag + ".go",
	}
	sandbox := testSandbox(t)
	if sandbox == SandboxOff {
		// Without the sandbox only relative writes are contained.
		targets = targets[len(targets)-1:]
	}
	var quoted []string
	for _, p := range targets {
		quoted = append(quoted, fmt.Sprintf("%q", p))
	}
	src := fmt.Sprintf(`package claim

import "os"

func init() {
	for _, p := range []string{%s} {
		os.WriteFile(p, []byte("package claimsuite\n\nfunc init() { panic(\"planted by a submission\") }\n"), 0o644)
	}
}
`, strings.Join(quoted, ", "))
	impl := t.TempDir()
	if err := os.WriteFile(filepath.Join(impl, "hostile.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := gradeHermetic(t, Options{Base: filepath.Join(root, "solutions", "01-claim"), Impl: impl, Sandbox: sandbox})
	for _, p := range targets[:len(targets)-1] {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("the submission wrote %s, want every write outside its scratch directory refused", p)
		}
	}
	if !rep.Passed {
		t.Errorf("score %d/%d, problems %q, want the (correct) store to pass", rep.Score(), rep.Total, rep.Problems)
	}
	// The reference solution still passes afterwards.
	again := gradeHermetic(t, Options{Impl: filepath.Join(root, "solutions", "01-claim")})
	if !again.Passed {
		t.Errorf("solution after the hostile run: score %d/%d, want a pass", again.Score(), again.Total)
	}
}

// cancelWriter cancels a context on its first write.
type cancelWriter struct {
	once   sync.Once
	cancel context.CancelFunc
	at     time.Time // when it cancelled
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { w.at = time.Now(); w.cancel() })
	return len(p), nil
}

// TestHermeticCancelStopsTheRun cancels the grading of a submission once its
// first case has finished and the second spins forever: RunGoTest must
// return at once with the context's error, its process tree stopped, not
// when the suite's time limit ends.
func TestHermeticCancelStopsTheRun(t *testing.T) {
	t.Parallel()
	impl := t.TempDir()
	src := `package claim

import (
	"context"
	"errors"
)

var ErrInProgress = errors.New("in progress")

var stores int

type Store struct{ id int }

func New() *Store { stores++; return &Store{id: stores} }

// Do answers for the first store and spins forever for the others.
func (s *Store) Do(ctx context.Context, key string, work func(ctx context.Context) (string, error)) (string, error) {
	for s.id > 1 {
	}
	return work(ctx)
}
`
	if err := os.WriteFile(filepath.Join(impl, "claim.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cw := &cancelWriter{cancel: cancel} // cancels as the first case ends
	opts := Options{Root: kitRoot(t), Lab: claimLab(t), Impl: impl, Timeout: time.Minute, Kit: hermeticKit(t), Sandbox: testSandbox(t), Progress: cw}
	rep, err := RunGoTest(ctx, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("RunGoTest cancelled after the first case = %v, %v; want context.Canceled", rep, err)
	}
	// A generous bound: without the cancel the run would last the suite's
	// minute.
	if took := time.Since(cw.at); took > 30*time.Second {
		t.Errorf("RunGoTest returned %s after the cancel, want it to stop the run at once", took)
	}
}
