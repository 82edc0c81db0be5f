package grader

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Options says what to grade and how.
type Options struct {
	// Root is the kit checkout: the directory holding go.mod.
	Root string
	// Lab is the lab to grade.
	Lab Lab
	// Impl is a directory whose non-test .go files replace the lab's
	// package. Empty means grade labs/<lab> as it is on disk.
	Impl string
	// Base, when set, is a directory whose non-test .go files form the
	// package before Impl's files are laid over it. Mistakes use it: Base is
	// the solution, Impl holds only the files that differ.
	Base string
	// Target names what is graded, for the report.
	Target string
	// Race runs the suite with the race detector.
	Race bool
	// Timeout bounds the whole go test run (go test -timeout). Zero means
	// one minute.
	Timeout time.Duration
	// Seed, when not empty, is passed to the suite as LABKIT_SEED.
	Seed string
	// Env is added to the go command's environment (REDIS_ADDR, ...).
	Env []string
	// Go is the go command; empty means "go".
	Go string
	// Progress, when not nil, receives one line as each case finishes.
	Progress io.Writer

	// Kit, when set, makes the run hermetic: the test binary is built in
	// this scratch copy of the kit (never in Root) with only the
	// implementation's files from Impl, and run in a private directory,
	// under Sandbox and within Limits.
	Kit     *Kit
	Sandbox Sandbox
	Limits  Limits
}

// ErrNoGo is returned when the go command cannot be started.
var ErrNoGo = errors.New("cannot run the go command")

// RunGoTest grades one implementation: it spawns go test -json with an
// overlay that puts the implementation's files and the lab's pristine test
// shim in the lab's directory, and parses the result. The error is for
// failures of the grader itself (no go command, unreadable directory); a
// submission that does not build, panics, races or hangs gets a Report that
// says so, never an error.
func RunGoTest(ctx context.Context, opts Options) (*Report, error) {
	if opts.Timeout == 0 {
		opts.Timeout = time.Minute
	}
	if opts.Kit != nil {
		return runHermetic(ctx, opts)
	}
	goCmd := opts.Go
	if goCmd == "" {
		goCmd = "go"
	}
	labDir := filepath.Join(opts.Root, "labs", opts.Lab.Dir)
	overlay, err := buildOverlay(labDir, opts)
	if err != nil {
		return nil, err
	}
	overlayFile, err := writeCached("overlay.json", overlay)
	if err != nil {
		return nil, err
	}

	// -vet=off: the suite is the kit's own pristine code, and vet's
	// findings in a student's code are not part of the grade; skipping it
	// saves a vet run on every check.
	args := []string{"test", "-json", "-count=1", "-vet=off", "-timeout", opts.Timeout.String(), "-overlay", overlayFile,
		"-run", "^" + opts.Lab.TestName + "$"}
	if opts.Race {
		args = append(args, "-race")
	}
	args = append(args, "./labs/"+opts.Lab.Dir+"/")

	// The go command's own limit is a little longer than the test's, so
	// that go test reports the timeout itself; ours only catches a wedged
	// toolchain.
	runCtx, cancel := context.WithTimeout(ctx, opts.Timeout+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, goCmd, args...)
	cmd.Dir = opts.Root
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Env = append(cmd.Env, "GOWORK=off", RaceEnv(os.Getenv("GORACE")))
	if opts.Seed != "" {
		cmd.Env = append(cmd.Env, "LABKIT_SEED="+opts.Seed)
	} else {
		cmd.Env = append(cmd.Env, "LABKIT_SEED=")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGo, err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGo, err)
	}
	p := newParser(opts.Lab, labDir, opts.Progress)
	p.consume(stdout)
	waitErr := cmd.Wait()
	if runCtx.Err() != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rep := p.report(stderr.String())
	rep.Target = opts.Target
	rep.Race = opts.Race
	rep.Seed = opts.Seed
	rep.Duration = time.Since(start)
	if runCtx.Err() != nil {
		rep.Problems = append(rep.Problems, "the go command itself did not finish in time and was stopped")
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && runCtx.Err() == nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGo, waitErr)
	}
	if waitErr == nil && !rep.Passed && rep.Build == nil && len(rep.Problems) == 0 {
		// go test said ok but not every case ran: the binary left early
		// with exit code 0 (os.Exit(0) from init, say).
		rep.Problems = append(rep.Problems, "the test binary exited with success before the suite finished (os.Exit in the code under test?)")
	}
	return rep, nil
}

// RaceEnv returns the GORACE setting for a graded run, given the current
// value: it keeps every option already set and adds atexit_sleep_ms=0
// unless the caller chose a value. The race runtime's default sleeps one
// second when the binary exits so that other threads can finish printing a
// report; the testing package already fails the test during which a race was
// reported, and each report is written by the goroutine that detects it
// before it goes on, so the second buys nothing here but a second of every
// run.
func RaceEnv(current string) string {
	if strings.Contains(current, "atexit_sleep_ms=") {
		return "GORACE=" + current
	}
	return "GORACE=" + strings.TrimSpace(current+" atexit_sleep_ms=0")
}

// buildOverlay returns the go -overlay JSON that makes labs/<lab> contain
// exactly the implementation's files plus the pristine test shim.
func buildOverlay(labDir string, opts Options) ([]byte, error) {
	replace := map[string]string{}
	existing, err := filepath.Glob(filepath.Join(labDir, "*.go"))
	if err != nil {
		return nil, err
	}
	// Every test file in the lab directory is dropped: the student's copy
	// of the shim and any test file of their own.
	for _, f := range existing {
		if strings.HasSuffix(f, "_test.go") {
			replace[f] = ""
		}
	}
	if opts.Impl != "" {
		files := map[string]string{} // base name -> source path
		for _, dir := range []string{opts.Base, opts.Impl} {
			if dir == "" {
				continue
			}
			src, err := goSources(dir)
			if err != nil {
				return nil, err
			}
			for _, f := range src {
				files[filepath.Base(f)] = f
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no .go files to grade", opts.Impl)
		}
		for _, f := range existing {
			if !strings.HasSuffix(f, "_test.go") {
				replace[f] = "" // starter file, unless the implementation has one of that name
			}
		}
		for name, src := range files {
			replace[filepath.Join(labDir, name)] = src
		}
	} else if opts.Lab.InstrumentSync {
		// The lab directory is graded as it is: its own files are the
		// ones to instrument.
		for _, f := range existing {
			if !strings.HasSuffix(f, "_test.go") {
				replace[f] = f
			}
		}
	}
	if opts.Lab.InstrumentSync {
		for target, src := range replace {
			if src == "" || strings.HasSuffix(target, "_test.go") {
				continue
			}
			if replace[target], err = instrumentedCopy(src, os.ReadFile); err != nil {
				return nil, err
			}
		}
	}
	shim, err := writeCached(opts.Lab.TestFile, []byte(opts.Lab.Shim))
	if err != nil {
		return nil, err
	}
	replace[filepath.Join(labDir, opts.Lab.TestFile)] = shim
	return json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "  ")
}

// goSources lists the non-test .go files of dir, sorted.
func goSources(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read implementation: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			abs, err := filepath.Abs(filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			out = append(out, abs)
		}
	}
	sort.Strings(out)
	return out, nil
}

// writeCached writes content to a file named name under a directory keyed by
// the content's hash in the user cache, and returns its path. Stable paths
// keep go's build cache warm across runs.
func writeCached(name string, content []byte) (string, error) {
	sum := sha256.Sum256(content)
	dir, err := cacheDir("overlay", hex.EncodeToString(sum[:8]))
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := writeFileAtomic(path, content); err != nil {
		return "", err
	}
	return path, nil
}

// cacheDir returns (and creates) the directory labkit/<kind>/<key> in the
// user cache, or in the temporary directory when there is no user cache.
func cacheDir(kind, key string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "labkit", kind, key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("grader cache: %w", err)
	}
	return dir, nil
}

// writeFileAtomic writes content to path unless it already holds exactly
// that, through a temporary file and a rename, so that concurrent graders
// never see a half-written file.
func writeFileAtomic(path string, content []byte) error {
	if existing, err := os.ReadFile(path); err == nil && bytes.Equal(existing, content) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("grader cache: %w", err)
	}
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return fmt.Errorf("grader cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("grader cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("grader cache: %w", err)
	}
	return nil
}
