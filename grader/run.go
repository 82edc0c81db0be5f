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
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	// Timeout bounds the whole run of the suite, every rerun included.
	// Zero means one minute.
	Timeout time.Duration
	// CaseTimeout is the real time one case may run: a case still running
	// after it is stopped (SIGQUIT, so that the runtime prints where every
	// goroutine is), judged from that dump, and the cases after it run in
	// a fresh process. Zero means DefaultCaseTimeout.
	CaseTimeout time.Duration
	// ReuseBinary keeps the test binary at a stable path in the user cache
	// (one per kit checkout, lab and build mode) and builds it again only
	// when its inputs changed, which skips the link of an unchanged
	// package: for labctl check and watch. Without it the binary lives in a
	// temporary directory for the run only.
	ReuseBinary bool
	// FailFast stops the suite at its first failing case (go test
	// -failfast): the cases after it are not run. For mutation testing,
	// where one failing case is enough to kill a mutant; a report that
	// must say every failing case (check, grade, verify) never sets it.
	FailFast bool
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
	// RunAs is the user the test binary runs as without bubblewrap (see
	// ResolveRunAs); empty means the grader's own.
	RunAs string
}

// ErrNoGo is returned when the go command cannot be started.
var ErrNoGo = errors.New("cannot run the go command")

// RunGoTest grades one implementation: it builds the lab's test binary
// with go test -c, runs it (see runAndRecover: a case that hangs or
// crashes costs that case only) and decodes its test2json stream, through
// the one pipeline of runPipeline. Without Kit, the binary is built with
// an overlay that puts the implementation's files and the lab's pristine
// test shim in the lab's directory of Root, and runs there; with Kit, it
// is built in that scratch copy of the kit and runs under Sandbox. The error is for failures of
// the grader itself (no go command, unreadable directory); a submission
// that does not build, panics, races or hangs gets a Report that says so,
// never an error.
func RunGoTest(ctx context.Context, opts Options) (*Report, error) {
	if opts.Timeout == 0 {
		opts.Timeout = time.Minute
	}
	if opts.CaseTimeout == 0 {
		opts.CaseTimeout = DefaultCaseTimeout
	}
	if opts.Kit != nil {
		return runPipeline(ctx, opts, &hermeticPlace{opts: opts, kit: opts.Kit})
	}
	return runPipeline(ctx, opts, &overlayPlace{opts: opts})
}

// buildOverlayBinary compiles the lab's test binary to binary with go test
// -c and the overlay, in the kit checkout. It returns the compiler's output
// when the package does not build, nil when it does. When binary already
// holds a build of the same inputs, go test -c leaves it as it is (no
// link), which is what makes a warm check fast.
func buildOverlayBinary(ctx context.Context, opts Options, overlayFile, binary string) ([]string, error) {
	goCmd := opts.Go
	if goCmd == "" {
		goCmd = "go"
	}
	// -vet=off: the suite is the kit's own pristine code, and vet's
	// findings in a student's code are not part of the grade; skipping it
	// saves a vet run on every check.
	args := []string{"test", "-c", "-o", binary, "-vet=off", "-overlay", overlayFile}
	if opts.Race {
		args = append(args, "-race")
	}
	args = append(args, "./labs/"+opts.Lab.Dir+"/")
	buildCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(buildCtx, goCmd, args...)
	cmd.Dir = opts.Root
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Env = append(cmd.Env, "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return nil, fmt.Errorf("%w: %v", ErrNoGo, err)
	}
	if err == nil {
		if _, statErr := os.Stat(binary); statErr != nil {
			return nil, fmt.Errorf("%w: go test -c wrote no binary: %s", ErrNoGo, strings.TrimSpace(out.String()))
		}
		return nil, nil
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if buildCtx.Err() != nil {
		lines = append(lines, "the build did not finish in 5 minutes and was stopped")
	}
	return lines, nil
}

// testBinaryPath returns where to build the run's test binary, and a
// function to call when the run is over, with whether the binary was built.
//
// With ReuseBinary the binary is kept in the user cache, at
// labkit/bin/<hash of root, lab, race and sync>/<slug>.test. Each run
// builds into a private copy of it (a hard link, so go test -c still finds
// its build ID there and skips the link when nothing changed), runs that
// copy, and renames it over the stable path at the end: a check and a
// watch of the same lab never write or run each other's file.
func testBinaryPath(opts Options) (string, func(built bool), error) {
	name := opts.Lab.Slug + ".test"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if !opts.ReuseBinary {
		dir, err := os.MkdirTemp("", "labkit-bin-")
		if err != nil {
			return "", nil, fmt.Errorf("grader: %w", err)
		}
		return filepath.Join(dir, name), func(bool) { os.RemoveAll(dir) }, nil
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00race=%v\x00sync=%v\x00atomic=%v", root, opts.Lab.Dir, opts.Race, opts.Lab.InstrumentSync, opts.Lab.InstrumentAtomic))
	pruneBinaries()
	dir, err := cacheDir("bin", hex.EncodeToString(sum[:8]))
	if err != nil {
		return "", nil, err
	}
	if err := writeFileAtomic(filepath.Join(dir, "root"), []byte(root)); err != nil {
		return "", nil, err
	}
	stable := filepath.Join(dir, name)
	tmp := filepath.Join(dir, fmt.Sprintf("%s.%d-%d.tmp", name, os.Getpid(), time.Now().UnixNano()))
	if err := os.Link(stable, tmp); err != nil {
		if data, err := os.ReadFile(stable); err == nil {
			_ = os.WriteFile(tmp, data, 0o755)
		}
	}
	return tmp, func(built bool) {
		if built {
			_ = os.Rename(tmp, stable)
		}
		// When go test -c found the copy up to date, it is still a link
		// to the stable binary, and rename(2) of a link onto its twin
		// does nothing: the copy goes here.
		os.Remove(tmp)
	}, nil
}

// pruneBinaries removes, once per process, the cached test binaries of kit
// checkouts that no longer exist (a test's temporary copy of the kit) or
// that no check used for a month, and private copies left by a run that
// was killed.
var pruneBinaries = sync.OnceFunc(func() {
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		base = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(base, "labkit", "bin", "*"))
	for _, dir := range dirs {
		fi, err := os.Stat(dir)
		if err != nil {
			continue
		}
		root, rerr := os.ReadFile(filepath.Join(dir, "root"))
		_, gerr := os.Stat(filepath.Join(string(root), "go.mod"))
		switch {
		case rerr != nil && time.Since(fi.ModTime()) > time.Hour, rerr == nil && gerr != nil, time.Since(fi.ModTime()) > 30*24*time.Hour:
			os.RemoveAll(dir)
			continue
		}
		// A private copy's name ends with the time it was made (its
		// modification time is the stable binary's, whose inode it shares).
		tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
		for _, t := range tmps {
			stamp := strings.TrimSuffix(t[strings.LastIndexByte(t, '-')+1:], ".tmp")
			if ns, err := strconv.ParseInt(stamp, 10, 64); err == nil && time.Since(time.Unix(0, ns)) > time.Hour {
				os.Remove(t)
			}
		}
	}
})

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
// exactly the implementation's files plus the pristine test shim, and the
// copies it made in the cache (the shim, files whose "sync" or
// "sync/atomic" import it instrumented), each with the path that names the file it stands for,
// relative to the kit root when it is inside it ("labs/01-claim/claim.go"):
// the compiler names the copies, and a student must see their own file.
func buildOverlay(labDir string, opts Options) (overlay []byte, copies map[string]string, err error) {
	replace := map[string]string{}
	copies = map[string]string{}
	subst := instrumented(opts.Lab)
	existing, err := filepath.Glob(filepath.Join(labDir, "*.go"))
	if err != nil {
		return nil, nil, err
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
				return nil, nil, err
			}
			for _, f := range src {
				files[filepath.Base(f)] = f
			}
		}
		if len(files) == 0 {
			return nil, nil, fmt.Errorf("%s: no .go files to grade", opts.Impl)
		}
		for _, f := range existing {
			if !strings.HasSuffix(f, "_test.go") {
				replace[f] = "" // starter file, unless the implementation has one of that name
			}
		}
		for name, src := range files {
			replace[filepath.Join(labDir, name)] = src
		}
	} else if len(subst) > 0 {
		// The lab directory is graded as it is: its own files are the
		// ones to instrument.
		for _, f := range existing {
			if !strings.HasSuffix(f, "_test.go") {
				replace[f] = f
			}
		}
	}
	if len(subst) > 0 {
		for target, src := range replace {
			if src == "" || strings.HasSuffix(target, "_test.go") {
				continue
			}
			if replace[target], err = instrumentedCopy(src, subst, os.ReadFile); err != nil {
				return nil, nil, err
			}
			if replace[target] != src {
				copies[replace[target]] = kitPath(opts.Root, src)
			}
		}
	}
	shim, err := writeCached(opts.Lab.TestFile, []byte(opts.Lab.Shim))
	if err != nil {
		return nil, nil, err
	}
	replace[filepath.Join(labDir, opts.Lab.TestFile)] = shim
	copies[shim] = "labs/" + opts.Lab.Dir + "/" + opts.Lab.TestFile
	overlay, err = json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "  ")
	return overlay, copies, err
}

// kitPath is path relative to the kit root when it is inside it, with
// forward slashes, else path itself.
func kitPath(root, path string) string {
	if root == "" {
		return path
	}
	r, err := filepath.Rel(root, path)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(r)
}

// screenDir screens what the overlay run builds (see screenSource): the
// implementation's files over its base, or the lab directory as it is. It
// returns the reason the code is refused, nil when it may be built, and an
// error only when the files cannot be read.
func screenDir(labDir string, opts Options) (refused, err error) {
	base, impl := opts.Base, opts.Impl
	if impl == "" {
		base, impl = "", labDir
	}
	files, err := readSources(base, impl)
	if err != nil {
		return nil, err
	}
	others, err := otherSources(impl)
	if err != nil {
		return nil, err
	}
	return screenSource(opts.Lab, files, others), nil
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
