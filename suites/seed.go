package suites

import (
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fourth-outcome/labkit/rubric"
)

// SeedEnv and ProgEnv are rubric's: the environment through which labctl
// passes a seed and its own command line to the suite.
const (
	SeedEnv = rubric.SeedEnv
	ProgEnv = rubric.ProgEnv
)

// replayCommand is the command that replays a case with seed: through
// labctl as the learner runs it, or, when the suite runs without labctl
// (go test from an editor), through go run from the kit root.
func replayCommand(lab, seed int64) string {
	if prog := os.Getenv(ProgEnv); prog != "" {
		return fmt.Sprintf("%s check %d --seed %d", prog, lab, seed)
	}
	return fmt.Sprintf("go run ./cmd/labctl check %d --seed %d, from the kit's root", lab, seed)
}

// seeds holds the seed each test asked for, by test name, so that a
// failure report can print it.
var seeds struct {
	sync.Mutex
	byName map[string]int64
}

// Seed returns the seed for the current case: the value of LABKIT_SEED when
// it is set, and otherwise a fixed number derived from the test's name, so
// the verdict is the same on every run and every machine. A failing case
// prints its seed so the run can be replayed.
func Seed(t *testing.T) int64 {
	t.Helper()
	var n int64
	if s := os.Getenv(SeedEnv); s != "" {
		var err error
		if n, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: not an integer", SeedEnv, s)
		}
	} else {
		h := fnv.New64a()
		h.Write([]byte(t.Name()))
		n = int64(h.Sum64() & (1<<53 - 1))
	}
	seeds.Lock()
	defer seeds.Unlock()
	if seeds.byName == nil {
		seeds.byName = map[string]int64{}
	}
	seeds.byName[t.Name()] = n
	return n
}

// seedOf reports the seed a case (or one of its subtests) asked for.
func seedOf(t *testing.T) (int64, bool) {
	seeds.Lock()
	defer seeds.Unlock()
	if n, ok := seeds.byName[t.Name()]; ok {
		return n, true
	}
	for name, s := range seeds.byName {
		if strings.HasPrefix(name, t.Name()+"/") {
			return s, true
		}
	}
	return 0, false
}
