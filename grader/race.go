package grader

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
)

// RaceSupport reports whether go test -race can work on this machine (it
// needs cgo and an installed C compiler) and, when it cannot, why. It asks
// the go command once per process.
var RaceSupport = sync.OnceValues(func() (bool, string) {
	out, err := exec.Command("go", "env", "CGO_ENABLED", "CC").Output()
	if err != nil {
		return false, "could not run go env"
	}
	fields := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(fields) < 2 || strings.TrimSpace(fields[0]) != "1" {
		return false, "cgo is disabled (CGO_ENABLED=0)"
	}
	cc := strings.Fields(fields[1])
	if len(cc) == 0 {
		return false, "no C compiler is configured"
	}
	if _, err := exec.LookPath(cc[0]); err != nil {
		return false, fmt.Sprintf("the C compiler %q is not installed", cc[0])
	}
	return true, ""
})
