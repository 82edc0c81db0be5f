package mutation

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// RecordFile is the name, beside a suite's equivalents file, of the record
// of the lab's last clean mutation run.
const RecordFile = "mutation-record.txt"

// Record is a lab's last clean mutation run: the hash of everything the
// run's verdicts depend on (Inputs), and the line that summed it up.
type Record struct {
	Inputs  string
	Summary string
}

// ReadRecord reads the record at path. A missing file is no error: it is
// the zero Record, which matches no inputs.
func ReadRecord(path string) (Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, nil
	}
	if err != nil {
		return Record{}, err
	}
	var r Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "inputs "):
			r.Inputs = strings.TrimSpace(strings.TrimPrefix(line, "inputs "))
		case strings.HasPrefix(line, "result "):
			r.Summary = strings.TrimSpace(strings.TrimPrefix(line, "result "))
		default:
			return Record{}, fmt.Errorf("%s: unexpected line %q (want \"inputs <hash>\" and \"result <summary>\")", path, line)
		}
	}
	return r, sc.Err()
}

// WriteRecord writes r to path.
func WriteRecord(path string, r Record) error {
	text := "# Written by labctl mutate after a clean run of this lab: every mutant\n" +
		"# killed or listed as equivalent. labctl mutate --changed (CI) runs the\n" +
		"# lab again only when its inputs no longer hash to this value.\n" +
		"inputs " + r.Inputs + "\n" +
		"result " + r.Summary + "\n"
	return os.WriteFile(path, []byte(text), 0o644)
}

// Inputs hashes everything a lab's mutation verdicts depend on: the Go
// files of every package of the kit's module that the solution's tests
// build (the solution, the suite and the suite's own dependencies), the
// module's go.mod and go.sum (every other dependency's version), the
// lab's test shim, the equivalents file, the gremlins pin
// (toolsModfile and its go.sum), the Go version and whether the suites run
// with the race detector. The grader and this package, which run and judge
// the suite, are not inputs: their own tests check them, and labctl verify
// checks them over the whole catalogue.
func Inputs(ctx context.Context, root, solutionDir, shim, equivalents, toolsModfile string, race bool) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-test", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./"+filepath.ToSlash(solutionDir))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list the dependencies of %s: %v\n%s", solutionDir, err, lastLines(stderr.String(), 10))
	}
	files := map[string]bool{}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue // a module's package, pinned by go.sum
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".go") {
				files[filepath.Join(rel, e.Name())] = true
			}
		}
	}
	toolsSum := strings.TrimSuffix(toolsModfile, ".mod") + ".sum"
	for _, f := range []string{"go.mod", "go.sum", shim, equivalents, toolsModfile, toolsSum} {
		if f == "" {
			continue
		}
		if filepath.IsAbs(f) {
			if rel, err := filepath.Rel(root, f); err == nil {
				f = rel
			}
		}
		files[f] = true
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "go %s, race %v\n", runtime.Version(), race)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(h, "%s absent\n", filepath.ToSlash(name))
			continue
		}
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "%s %x\n", filepath.ToSlash(name), sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
