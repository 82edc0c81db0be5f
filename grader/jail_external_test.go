//go:build linux

package grader_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/fourth-outcome/labkit/grader"
)

// jailCase is one way a test binary can be run: under bubblewrap, or
// through the launcher without it, as the grader's user or another.
type jailCase struct {
	name    string
	sandbox Sandbox
	runAs   string
}

// jailCases lists the ways this machine can run a test binary: bwrap when
// it works, the launcher always, and the launcher as nobody when the
// tests run as root.
func jailCases(tb testing.TB) []jailCase {
	tb.Helper()
	var out []jailCase
	if ok, _ := BwrapSupport(); ok {
		out = append(out, jailCase{"bwrap", SandboxBwrap, ""})
	}
	out = append(out, jailCase{"plain", SandboxOff, ""})
	if os.Geteuid() == 0 {
		out = append(out, jailCase{"plain-nobody", SandboxOff, "nobody"})
	}
	return out
}

// gradeToyIn grades the toy implementation hermetically, in a scratch kit,
// the way jc says.
func gradeToyIn(t *testing.T, root, impl string, jc jailCase, lim Limits) *Report {
	t.Helper()
	scratch := t.TempDir()
	if jc.runAs != "" {
		// t.TempDir's parent is the test's own, which only its owner
		// may enter; the run's user must pass through it.
		if err := os.Chmod(filepath.Dir(scratch), 0o711); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{Root: root, Lab: toyLab, Impl: impl, Timeout: time.Minute, CaseTimeout: toyCaseTimeout,
		Kit: &Kit{Dir: root, Scratch: scratch, Module: "example.com/toy", Commit: "test"}, Sandbox: jc.sandbox, RunAs: jc.runAs, Limits: lim}
	holdRunAs(t, jc.runAs, false)
	rep, err := RunGoTest(context.Background(), opts)
	if err != nil {
		t.Fatalf("RunGoTest(toy, %s) error = %v", jc.name, err)
	}
	return rep
}

// TestJailConfinesTheBinary grades a toy whose init tries what a test
// binary must not do (read /proc, its own memory included; read the kit
// and the grader's files; write outside its run directory) and what it
// must be able to do (write its $HOME and $TMPDIR): Answer answers right
// only when every attempt went as it should, so the toy scores 100 exactly
// when the jail holds. It runs each way this machine can run a binary.
func TestJailConfinesTheBinary(t *testing.T) {
	if LandlockABIForTest() == 0 {
		t.Log("no Landlock here: the plain runs are not confined and are skipped")
	}
	outside := filepath.Join(t.TempDir(), "planted")
	if err := os.Chmod(filepath.Dir(outside), 0o777); err != nil {
		t.Fatal(err)
	}
	mine, err := filepath.Abs("sandbox.go") // a file of the grader's
	if err != nil {
		t.Fatal(err)
	}
	for _, jc := range jailCases(t) {
		t.Run(jc.name, func(t *testing.T) {
			t.Parallel()
			if jc.sandbox == SandboxOff && LandlockABIForTest() == 0 {
				t.Skip("no Landlock on this kernel")
			}
			root, impl := toyKit(t, "\t\"os\"\n\t\"path/filepath\"\n\t\"strings\"\n", fmt.Sprintf(`var wrong []string

func init() {
	must := func(what string, err error) {
		if err != nil {
			wrong = append(wrong, what+": "+err.Error())
		}
	}
	mustNot := func(what string, err error) {
		if err == nil {
			wrong = append(wrong, what)
		}
	}
	_, err := os.ReadFile("/proc/self/maps")
	mustNot("read /proc/self/maps", err)
	f, err := os.Open("/proc/self/mem")
	mustNot("open /proc/self/mem", err)
	if f != nil {
		f.Close()
	}
	_, err = os.ReadDir("/sys/kernel")
	mustNot("read /sys", err)
	_, err = os.ReadFile(%[1]q)
	mustNot("read the kit's solutions", err)
	_, err = os.ReadFile(%[2]q)
	mustNot("read the grader's files", err)
	mustNot("write outside", os.WriteFile(%[3]q, []byte("x"), 0o644))
	mustNot("write /dev/shm", os.WriteFile("/dev/shm/labkit-planted", []byte("x"), 0o644))
	home, _ := os.UserHomeDir()
	must("write $HOME", os.WriteFile(filepath.Join(home, "ok"), []byte("x"), 0o644))
	must("write $TMPDIR", os.WriteFile(filepath.Join(os.TempDir(), "ok"), []byte("x"), 0o644))
	must("write /dev/null", os.WriteFile("/dev/null", []byte("x"), 0o644))
}

func Answer(c string) string {
	if len(wrong) > 0 {
		return strings.Join(wrong, "; ")
	}
	return c
}
`, filepath.Join(kitRoot(t), "solutions", "01-claim", "claim.go"), mine, outside))
			rep := gradeToyIn(t, root, impl, jc, Limits{})
			if rep.Score() != rep.Total {
				t.Errorf("score %d/%d, want %d: the jail let the binary do, or kept it from doing, %q; problems %q",
					rep.Score(), rep.Total, rep.Total, rep.Cases[0].Output, rep.Problems)
			}
			if _, err := os.Stat(outside); err == nil {
				t.Errorf("the binary wrote %s", outside)
			}
			os.Remove("/dev/shm/labkit-planted")
		})
	}
}

// survivors lists the processes whose command line holds tag.
func survivors(tb testing.TB, tag string) []int {
	tb.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		tb.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmdline, []byte(tag)) {
			out = append(out, pid)
		}
	}
	return out
}

// detachingToy is a toy whose init starts a copy of its test binary in a
// session of its own (setsid, out of the binary's process group), holding
// the binary's output, which waits a second and then writes a file: a
// process that would outlive the run.
func detachingToy(t *testing.T, tag string) (root, impl string) {
	t.Helper()
	return toyKit(t, "\t\"os\"\n\t\"os/exec\"\n\t\"syscall\"\n\t\"time\"\n", fmt.Sprintf(`var startErr error

func init() {
	if os.Getenv("TOY_DETACHED") != "" {
		time.Sleep(time.Second)
		os.WriteFile("survived", []byte("x"), 0o644)
		for {
			time.Sleep(time.Hour)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", %q)
	cmd.Env = append(os.Environ(), "TOY_DETACHED=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	startErr = cmd.Start()
}

func Answer(c string) string {
	if startErr != nil {
		return startErr.Error()
	}
	return c
}
`, tag))
}

// TestDetachedChildDies grades the detaching toy each way this machine can
// run it: the run must end (the child holds its output), the toy's cases
// pass (the child did start), and no process of it may be left when
// RunGoTest returns: in bwrap's PID namespace or the launcher's it dies
// with the binary.
func TestDetachedChildDies(t *testing.T) {
	for _, jc := range jailCases(t) {
		t.Run(jc.name, func(t *testing.T) {
			t.Parallel()
			tag := fmt.Sprintf("labkit-detached-%d", time.Now().UnixNano())
			root, impl := detachingToy(t, tag)
			rep := gradeToyIn(t, root, impl, jc, Limits{})
			left := survivors(t, tag)
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			if len(left) > 0 {
				t.Errorf("processes %v of the run outlived it", left)
			}
			if rep.Score() != rep.Total {
				t.Errorf("score %d/%d, want %d; output %q, problems %q", rep.Score(), rep.Total, rep.Total, rep.Cases[0].Output, rep.Problems)
			}
		})
	}
}

// TestDetachedChildDiesWithoutPIDNamespace grades the detaching toy as if
// the grader could make no PID namespace (a container without
// CAP_SYS_ADMIN): as nobody, the sweep of nobody's processes after the
// binary exits must kill the child; as the grader's own user, nothing can,
// and the report must say so. Not parallel: it changes what the grader
// believes of this machine.
func TestDetachedChildDiesWithoutPIDNamespace(t *testing.T) {
	if LandlockABIForTest() == 0 {
		t.Skip("no Landlock on this kernel")
	}
	t.Cleanup(SetPIDNamespacesForTest(false))
	if os.Geteuid() == 0 {
		// Its sweep kills every process of nobody's on this machine: no
		// other run as nobody, in this process or another, may be on.
		holdRunAs(t, "nobody", true)
		tag := fmt.Sprintf("labkit-detached-%d", time.Now().UnixNano())
		root, impl := detachingToy(t, tag)
		rep := gradeToyIn(t, root, impl, jailCase{"plain-nobody", SandboxOff, "nobody"}, Limits{})
		left := survivors(t, tag)
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if len(left) > 0 {
			t.Errorf("as nobody without a PID namespace: processes %v of the run outlived it", left)
		}
		if rep.Score() != rep.Total {
			t.Errorf("as nobody: score %d/%d, want %d; output %q", rep.Score(), rep.Total, rep.Total, rep.Cases[0].Output)
		}
	}

	// As the grader's user: the child survives, cut off from the output
	// after survivorGrace, and the report says it could not be stopped.
	tag := fmt.Sprintf("labkit-detached-%d", time.Now().UnixNano())
	root, impl := detachingToy(t, tag)
	rep := gradeToyIn(t, root, impl, jailCase{"plain", SandboxOff, ""}, Limits{})
	for _, pid := range survivors(t, tag) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "no PID namespace and no dedicated user") || !strings.Contains(notes, "outlived it") {
		t.Errorf("Notes = %q, want the missing PID namespace and the survivor named", rep.Notes)
	}
}

// TestDiskLimit grades toys that write 64 MiB, in 1 MiB files, with a
// disk limit of 8 MiB: one into $TMPDIR (/tmp in the sandbox) that then
// waits, which the limit must stop, and one into its working directory
// that then goes on to its cases, which the last measure after the binary
// exits must see. Both must report the disk limit.
func TestDiskLimit(t *testing.T) {
	for _, jc := range jailCases(t) {
		for _, tc := range []struct{ name, where, then string }{
			{"tmp-waits", "os.TempDir()", "select {}"},
			{"cwd-exits", `"."`, ""},
		} {
			t.Run(jc.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				root, impl := toyKit(t, "\t\"os\"\n\t\"path/filepath\"\n\t\"strconv\"\n", fmt.Sprintf(`func init() {
	chunk := make([]byte, 1<<20)
	for i := 0; i < 64; i++ {
		os.WriteFile(filepath.Join(%s, "fill"+strconv.Itoa(i)), chunk, 0o644)
	}
	%s
}

func Answer(c string) string { return c }
`, tc.where, tc.then))
				rep := gradeToyIn(t, root, impl, jc, Limits{Disk: 8 << 20})
				if want := "disk (8 MiB)"; rep.Limit != want {
					t.Errorf("Limit = %q, want %q; problems %q", rep.Limit, want, rep.Problems)
				}
				if tc.then != "" && rep.Score() != 0 {
					t.Errorf("score %d, want 0: the binary was stopped in init", rep.Score())
				}
			})
		}
	}
}

// TestInitLoopIsStopped grades a toy whose init never returns: the binary
// starts no case, is stopped after one case budget (not the run's time
// limit), and every case is not run, the reason naming the loop's line.
func TestInitLoopIsStopped(t *testing.T) {
	root, impl := toyKit(t, "", `var n int

func init() {
	for n >= 0 { // LOOP
		n++
	}
}

func Answer(c string) string { return c }
`)
	line := lineOf(t, impl, "LOOP")
	bothPaths(t, func(t *testing.T, hermetic bool) {
		rep := gradeToy(t, root, impl, hermetic)
		if got, want := statusList(rep), []Status{StatusNotRun, StatusNotRun, StatusNotRun}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("statuses = %v, want %v", got, want)
		}
		out := rep.Cases[0].Output
		// The loop is "running" or, on a busy machine where it was
		// preempted when the stacks were dumped, "runnable": either is a
		// goroutine spinning.
		if len(out) == 0 || !strings.Contains(out[0], "crashed in init") || !spinningAt(out[0], fmt.Sprintf("toy.go:%d (init.0)", line)) {
			t.Errorf("not-run output = %q, want a crash in init at toy.go:%d; problems %q", out, line, rep.Problems)
		}
	})
}

// spinningAt reports whether line says a goroutine was spinning (running or
// runnable) at where.
func spinningAt(line, where string) bool {
	return strings.Contains(line, "spinning (running) at "+where) || strings.Contains(line, "spinning (runnable) at "+where)
}

// TestRaceDetectorInJail grades the data-race submission with the race
// detector each way this machine can run it: without /proc the race
// runtime warns once that it cannot read the executable's name, and must
// still report the race, which must reach the report as one.
func TestRaceDetectorInJail(t *testing.T) {
	if !raceOK() {
		t.Skip("the race detector needs cgo")
	}
	for _, jc := range jailCases(t) {
		t.Run(jc.name, func(t *testing.T) {
			t.Parallel()
			rep := gradeHermetic(t, Options{Impl: submission("data-race"), Race: true, Sandbox: jc.sandbox, RunAs: jc.runAs})
			if statuses(rep)[StatusRace] == 0 {
				t.Errorf("statuses = %v, problems %q, limit %q, notes %q, want a data race; first case's output:\n%s",
					statuses(rep), rep.Problems, rep.Limit, rep.Notes, strings.Join(rep.Cases[0].Output, "\n"))
			}
			for _, c := range rep.Cases {
				for _, l := range c.Output {
					if strings.Contains(l, "reading executable name failed") {
						t.Errorf("case %s shows the race runtime's warning: %q", c.Name, l)
					}
				}
			}
		})
	}
}

// TestJailSolutionScores grades the reference solution of lab 01 each way
// this machine can run it: it must score 100, its passes signed by the
// suite (the key reaches the test binary, not the launcher).
func TestJailSolutionScores(t *testing.T) {
	for _, jc := range jailCases(t) {
		t.Run(jc.name, func(t *testing.T) {
			t.Parallel()
			rep := gradeHermetic(t, Options{Impl: filepath.Join(kitRoot(t), "solutions", "01-claim"), Sandbox: jc.sandbox, RunAs: jc.runAs})
			if rep.Score() != rep.Total {
				t.Errorf("solution: score %d/%d, problems %q, want %d", rep.Score(), rep.Total, rep.Problems, rep.Total)
			}
		})
	}
}
