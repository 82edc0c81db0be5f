package grader

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/attest"
	"github.com/fourth-outcome/labkit/rubric"
)

// A run is build → run → decode → attribute, the same whatever the
// submission's files are and wherever its binary runs: runPipeline does
// it once. A place says where: in the kit checkout with an overlay
// (overlayPlace, labctl check and watch) or in a scratch copy of the kit
// under a sandbox (hermeticPlace, grade and verify). The decoding (the
// parser), the reruns after a hang or a crash (runAndRecover), the
// watchdog and the scoring (Finalize) are written once, here and in what
// it calls.
type place interface {
	// prepare reads the sources and screens them: it returns the parser
	// of the run, and refused when the submission is not to be built (a
	// forbidden import, a file outside the lab), with the plain reason.
	prepare(ctx context.Context) (p *parser, refused error, err error)
	// build compiles the test binary: the compiler's output when the
	// package does not build, nil when it does.
	build(ctx context.Context) (compilerOut []string, err error)
	// runSpec says how the built binary runs and how a run is recovered.
	runSpec() (runSpec, recoverOptions, error)
	// attribute adds to the decoded report what only this place knows
	// (what the sandbox could not enforce, the signatures it checked),
	// before Finalize.
	attribute(p *parser, rep *Report)
	// stamp records the place's facts in the report (the kit commit, the
	// sandbox), before Finalize.
	stamp(rep *Report)
	// close releases what prepare and build took.
	close()
}

// runPipeline grades opts at pl.
func runPipeline(ctx context.Context, opts Options, pl place) (*Report, error) {
	start := time.Now()
	defer pl.close()
	finish := func(rep *Report) *Report {
		rep.Target = opts.Target
		rep.Race = opts.Race
		rep.Seed = opts.Seed
		pl.stamp(rep)
		rep.Duration = time.Since(start)
		rep.Finalize(opts.Lab)
		return rep
	}
	p, refused, err := pl.prepare(ctx)
	if err != nil {
		return nil, err
	}
	if refused != nil {
		p.buildFailed = true
		p.buildOutput = []string{refused.Error()}
		return finish(p.report("")), nil
	}
	buildStart := time.Now()
	compilerOut, err := pl.build(ctx)
	if err != nil {
		return nil, err
	}
	buildTime := time.Since(buildStart)
	if compilerOut != nil {
		p.buildFailed = true
		p.buildOutput = compilerOut
		return finish(p.report("")), nil
	}
	spec, ro, err := pl.runSpec()
	if err != nil {
		return nil, err
	}
	runStart := time.Now()
	err = runAndRecover(ctx, p, ro, func(ctx context.Context, args []string, timeout time.Duration, onStart func(func()), consume func(io.Reader)) (runResult, error) {
		s := spec
		s.args, s.wall, s.onStart = args, timeout+30*time.Second, onStart
		return runSandboxed(ctx, s, consume)
	})
	if err != nil {
		return nil, err
	}
	runTime := time.Since(runStart)
	rep := p.report("")
	pl.attribute(p, rep)
	rep = finish(rep)
	rep.BuildTime, rep.RunTime = buildTime, runTime
	return rep, nil
}

// overlayPlace runs in the kit checkout: go test -c with an overlay that
// puts the implementation's files and the pristine shim in labs/<lab>, the
// binary run in that directory without a sandbox.
type overlayPlace struct {
	opts        Options
	labDir      string
	overlayFile string
	binary      string
	release     func(built bool)
	built       bool
}

func (o *overlayPlace) prepare(context.Context) (*parser, error, error) {
	opts := o.opts
	o.labDir = filepath.Join(opts.Root, "labs", opts.Lab.Dir)
	screened, err := screenDir(o.labDir, opts)
	if err != nil {
		return nil, nil, err
	}
	overlay, copies, err := buildOverlay(o.labDir, opts)
	if err != nil {
		return nil, nil, err
	}
	if o.overlayFile, err = writeCached("overlay.json", overlay); err != nil {
		return nil, nil, err
	}
	if o.binary, o.release, err = testBinaryPath(opts); err != nil {
		return nil, nil, err
	}
	p := newParser(opts.Lab, o.labDir, opts.Progress)
	p.buildPaths = copies
	base, impl := opts.Base, opts.Impl
	if impl == "" {
		base, impl = "", o.labDir
	}
	if files, err := readSources(base, impl); err == nil {
		p.sources = newSources(files)
	}
	return p, screened, nil
}

func (o *overlayPlace) build(ctx context.Context) ([]string, error) {
	out, err := buildRetrying(ctx, func() ([]string, error) { return buildOverlayBinary(ctx, o.opts, o.overlayFile, o.binary) })
	o.built = err == nil && out == nil
	return out, err
}

func (o *overlayPlace) runSpec() (runSpec, recoverOptions, error) {
	opts := o.opts
	module := "labs"
	if data, err := os.ReadFile(filepath.Join(opts.Root, "go.mod")); err == nil {
		module = modulePathOf(data)
	}
	env := append(os.Environ(), opts.Env...)
	// The suite writes each case's record, unsigned: this run has no key.
	env = append(env, RaceEnv(os.Getenv("GORACE")), rubric.SeedEnv+"="+opts.Seed, attest.RecordsEnv+"=1")
	spec := runSpec{binary: o.binary, dir: o.labDir, env: env, sandbox: SandboxOff, noLimits: true,
		pkg: module + "/labs/" + opts.Lab.Dir}
	return spec, recoverOptions{caseTimeout: opts.CaseTimeout, total: opts.Timeout, failFast: opts.FailFast}, nil
}

func (o *overlayPlace) attribute(*parser, *Report) {}
func (o *overlayPlace) stamp(*Report)              {}

func (o *overlayPlace) close() {
	if o.release != nil {
		o.release(o.built)
	}
}

// hermeticPlace runs in opts.Kit, a scratch copy of the kit: the
// submission's files are screened, the test binary is built outside the
// sandbox (with -trimpath, so the kit's packages come from the shared
// build cache and no path of this machine reaches the feedback), then run
// in a private directory under the sandbox, every run with a fresh key
// when the kit's suites sign their verdicts.
type hermeticPlace struct {
	opts   Options
	kit    *Kit
	files  map[string][]byte
	work   string
	binary string
	notes  *noteSet
}

func (h *hermeticPlace) prepare(context.Context) (*parser, error, error) {
	opts := h.opts
	files, err := readSources(opts.Base, opts.Impl)
	if err != nil {
		return nil, nil, err
	}
	h.files = files
	if h.work, err = os.MkdirTemp(h.kit.Scratch, "run-"); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrKit, err)
	}
	p := newParser(opts.Lab, filepath.Join(h.kit.Dir, "labs", opts.Lab.Dir), opts.Progress)
	p.sources = newSources(files)
	others, err := otherSources(opts.Impl)
	if err != nil {
		return nil, nil, err
	}
	return p, screenSource(opts.Lab, files, others), nil
}

func (h *hermeticPlace) build(ctx context.Context) ([]string, error) {
	h.binary = filepath.Join(h.work, "bin", h.opts.Lab.Slug+".test")
	return cachedBuild(ctx, h.opts, h.files, h.work, h.binary)
}

func (h *hermeticPlace) runSpec() (runSpec, recoverOptions, error) {
	opts, kit, work := h.opts, h.kit, h.work
	for _, d := range []string{"run/home", "run/tmp"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			return runSpec{}, recoverOptions{}, fmt.Errorf("%w: %v", ErrKit, err)
		}
	}
	h.notes = &noteSet{}
	spec := runSpec{
		binary:  h.binary,
		workDir: work,
		sandbox: opts.Sandbox,
		limits:  opts.Limits,
		pkg:     kit.Module + "/labs/" + opts.Lab.Dir,
		runAs:   opts.RunAs,
		notes:   h.notes,
	}
	home, tmp := filepath.Join(work, "run", "home"), filepath.Join(work, "run", "tmp")
	path := os.Getenv("PATH")
	if spec.sandbox == SandboxBwrap {
		home, tmp, path = "/work/run/home", "/tmp", "/usr/bin:/bin"
	}
	ro := recoverOptions{caseTimeout: opts.CaseTimeout, total: opts.Timeout, failFast: opts.FailFast}
	env := opts.Env
	if kit.Attests {
		// Every run of the binary reads (and deletes) a fresh key.
		keyFile := filepath.Join(work, "run", ".attest")
		inside := keyFile
		if spec.sandbox == SandboxBwrap {
			inside = "/work/run/.attest"
		}
		env = append(env[:len(env):len(env)], attest.EnvFile+"="+inside)
		ro.newKey = func() ([]byte, error) {
			key := make([]byte, 32)
			if _, err := rand.Read(key); err != nil {
				return nil, err
			}
			if err := os.WriteFile(keyFile, key, 0o600); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrKit, err)
			}
			return key, nil
		}
	}
	spec.env = []string{"HOME=" + home, "TMPDIR=" + tmp, "PATH=" + path, RaceEnv(os.Getenv("GORACE")), rubric.SeedEnv + "=" + opts.Seed, attest.RecordsEnv + "=1"}
	for _, kv := range env {
		spec.env = append(spec.env, kv)
		if v, ok := strings.CutPrefix(kv, "REDIS_ADDR="); ok && v != "" {
			spec.shareNet = true
		}
	}
	return spec, ro, nil
}

func (h *hermeticPlace) attribute(p *parser, rep *Report) {
	if h.notes != nil {
		rep.Notes = h.notes.all()
	}
	if h.kit.Attests {
		confirmAttested(p, rep)
	}
}

func (h *hermeticPlace) stamp(rep *Report) {
	rep.Kit = h.kit.Commit
	rep.Sandbox = string(h.opts.Sandbox)
	if rep.Sandbox == "" {
		rep.Sandbox = string(SandboxOff)
	}
}

func (h *hermeticPlace) close() {
	if h.work != "" {
		os.RemoveAll(h.work)
	}
}
