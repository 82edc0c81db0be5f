package grader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// cachedBuild is buildTestBinary with the binaries of one batch shared:
// a submission whose files are byte for byte another's (an unchanged
// starter, a copy) reuses its binary instead of linking it again, which is
// most of a run's time.
func cachedBuild(ctx context.Context, opts Options, files map[string][]byte, work, binary string) ([]string, error) {
	key := sourceHash(files) + fmt.Sprintf("-%s-race%v-sync%v-atomic%v", opts.Lab.Dir, opts.Race, opts.Lab.InstrumentSync, opts.Lab.InstrumentAtomic)
	shared := filepath.Join(opts.Kit.Scratch, "bin", key, filepath.Base(binary))
	mu, _ := opts.Kit.builds.LoadOrStore(key, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if _, err := os.Stat(shared); err != nil {
		out, err := buildRetrying(ctx, func() ([]string, error) { return buildTestBinary(ctx, opts, files, work, shared) })
		if err != nil || out != nil {
			return out, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(binary), 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKit, err)
	}
	if err := os.Link(shared, binary); err != nil {
		data, err := os.ReadFile(shared)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrKit, err)
		}
		if err := os.WriteFile(binary, data, 0o755); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrKit, err)
		}
	}
	return nil, nil
}

// buildTestBinary compiles the lab's test binary from the submission's files
// and the pristine shim with go test -c in the scratch kit. It returns the
// compiler's output when the submission does not build, nil when it does.
func buildTestBinary(ctx context.Context, opts Options, files map[string][]byte, work, binary string) ([]string, error) {
	kit := opts.Kit
	labDir := filepath.Join(kit.Dir, "labs", opts.Lab.Dir)
	src := filepath.Join(work, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKit, err)
	}
	replace := map[string]string{}
	existing, _ := filepath.Glob(filepath.Join(labDir, "*.go"))
	for _, f := range existing {
		replace[f] = ""
	}
	subst := instrumented(opts.Lab)
	for name, data := range files {
		// As in every other run of the lab: the suite schedules the
		// submission's mutexes (and atomics) when the lab asks.
		data, _ = instrumentSync(data, subst)
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrKit, err)
		}
		replace[filepath.Join(labDir, name)] = filepath.Join(src, name)
	}
	shim := filepath.Join(work, "shim", opts.Lab.TestFile)
	if err := copyBytes(shim, []byte(opts.Lab.Shim)); err != nil {
		return nil, err
	}
	replace[filepath.Join(labDir, opts.Lab.TestFile)] = shim
	overlay, _ := json.Marshal(struct{ Replace map[string]string }{replace})
	overlayFile := filepath.Join(work, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKit, err)
	}
	goCmd := opts.Go
	if goCmd == "" {
		goCmd = "go"
	}
	// -s -w: no symbol table or DWARF, so the binary is quicker to link
	// and code under test cannot look the suite's variables up in it.
	args := []string{"test", "-c", "-o", binary, "-trimpath", "-vet=off", "-ldflags=-s -w", "-overlay", overlayFile}
	if opts.Race {
		args = append(args, "-race")
	}
	args = append(args, "./labs/"+opts.Lab.Dir+"/")
	buildCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(buildCtx, goCmd, args...)
	cmd.Dir = kit.Dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
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
	text := strings.ReplaceAll(out.String(), kit.Dir+string(filepath.Separator), "")
	text = strings.ReplaceAll(text, work+string(filepath.Separator), "")
	text = scratchPathRE.ReplaceAllString(text, "")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if buildCtx.Err() != nil {
		lines = append(lines, "the build did not finish in 5 minutes and was stopped")
	}
	if strings.Contains(text, kit.Module+"/solutions") || strings.Contains(text, "no required module provides package") || strings.Contains(text, "is not in std") {
		lines = append(lines, "the submission imports a package that is not part of what a lab may use (the reference solutions and the grader are not available to submissions)")
	}
	return lines, nil
}

// ErrBuildEnvironment is returned when the tests could not be built for a
// reason of the machine, not of the code (see machineTrouble), twice in a
// row: no score can be given, and none is.
var ErrBuildEnvironment = errors.New("this machine could not build the tests (its Go build cache, memory, disk or time ran out, twice; run the check again, and if it persists, `go clean -cache`)")

// machineTroubles are what the go command prints when a build fails because
// of the machine: an unreadable build cache, a compiler killed (out of
// memory), a full disk, a build stopped at its time limit on a machine too
// busy to finish it.
var machineTroubles = []string{
	"could not import ",
	"/go-build/",
	"signal: killed",
	"the build did not finish in 5 minutes",
	"no space left on device",
	"cannot allocate memory",
	"resource temporarily unavailable",
	"text file busy",
}

// machineTrouble returns the first line of a failed build's output that
// shows a problem of the machine rather than of the code, "" for none.
func machineTrouble(lines []string) string {
	for _, l := range lines {
		for _, t := range machineTroubles {
			if strings.Contains(l, t) {
				return l
			}
		}
	}
	return ""
}

// buildRetrying runs build, and once more when it failed for a reason of
// the machine (machineTrouble); when the second build fails that way too,
// it returns ErrBuildEnvironment rather than the output, so the code under
// test is not given a compile error, and no score, for the machine's
// trouble.
func buildRetrying(ctx context.Context, build func() ([]string, error)) ([]string, error) {
	out, err := build()
	if err != nil || out == nil || machineTrouble(out) == "" || ctx.Err() != nil {
		return out, err
	}
	out, err = build()
	if err != nil || out == nil {
		return out, err
	}
	if line := machineTrouble(out); line != "" {
		return nil, fmt.Errorf("%w: twice: %s", ErrBuildEnvironment, line)
	}
	return out, nil
}

// scratchPathRE matches the scratch directory of a run as the go command
// prints it relative to the kit ("../run-123/src/"), which the feedback
// leaves out.
var scratchPathRE = regexp.MustCompile(`(?:[^\s:]*/)?run-[0-9]+/(?:src|shim)/`)

// confirmAttested keeps a case's pass only when the suite signed it in the
// run of the test binary the case ran in: a pass without a valid
// attestation came from output that imitates test results, and counts as a
// failure. Scores are Finalize's.
func confirmAttested(p *parser, rep *Report) {
	forged := 0
	for i := range rep.Cases {
		c := &rep.Cases[i]
		if cs := p.cases[c.Name]; c.Status == StatusPass && (cs == nil || !cs.signed) {
			c.Status = StatusFail
			c.Output = []string{"the suite did not confirm this pass: output imitating a test result does not count"}
			forged++
		}
	}
	if forged > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d case(s) were reported passed by output the suite did not sign (printed test results are ignored)", forged))
	}
}

func copyBytes(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrKit, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("%w: %v", ErrKit, err)
	}
	return nil
}
