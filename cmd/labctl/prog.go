package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// prog is how the learner runs labctl from where they stand, the prefix of
// every command labctl prints: "go run ./cmd/labctl" under go run (and in
// tests) from the kit root, "go run ../../cmd/labctl" from a lab's folder;
// "labctl" when the binary on PATH is this one; else the binary's path,
// relative to the working directory when it is inside the kit
// ("./bin/labctl" from the root, "../../bin/labctl" from a lab's folder).
// Help texts write commands as "go run ./cmd/labctl ..."; commandsIn
// rewrites them with it.
func (e *env) prog() string {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	wd, _ := e.getwd()
	root, _ := e.kitRoot()
	return progFor(exe, wd, root, exec.LookPath)
}

// progFor is prog for the binary exe run in wd inside the kit at root
// (either may be empty when unknown); lookPath finds a name on PATH.
func progFor(exe, wd, root string, lookPath func(string) (string, error)) string {
	if exe == "" || strings.HasSuffix(exe, ".test") || strings.Contains(exe, string(filepath.Separator)+"go-build") {
		if wd == "" || root == "" {
			return "go run ./cmd/labctl"
		}
		return "go run " + relFrom(wd, filepath.Join(root, "cmd", "labctl"))
	}
	if onPath, err := lookPath(filepath.Base(exe)); err == nil {
		if a, err := filepath.Abs(onPath); err == nil && sameFile(a, exe) {
			return filepath.Base(exe)
		}
	}
	if wd != "" && root != "" {
		// os.Executable has its symbolic links resolved; the working
		// directory may not.
		if r, err := filepath.EvalSymlinks(root); err == nil {
			if w, err := filepath.EvalSymlinks(wd); err == nil {
				root, wd = r, w
			}
		}
		if in, err := filepath.Rel(root, exe); err == nil && in != ".." && !strings.HasPrefix(in, ".."+string(filepath.Separator)) {
			return relFrom(wd, exe)
		}
	}
	return exe
}

// relFrom is target as a path from dir that a shell runs as a command
// ("./bin/labctl", "../../cmd/labctl"), or target when there is none.
func relFrom(dir, target string) string {
	r, err := filepath.Rel(dir, target)
	if err != nil {
		return target
	}
	r = filepath.ToSlash(r)
	if r == ".." || strings.HasPrefix(r, "../") {
		return r
	}
	return "./" + r
}

// sameFile reports whether paths a and b name the same file.
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// commandsIn is a help text with its commands, written as
// "go run ./cmd/labctl ...", shown the way this run was invoked.
func (e *env) commandsIn(text string) string {
	return strings.ReplaceAll(text, "go run ./cmd/labctl", e.prog())
}
