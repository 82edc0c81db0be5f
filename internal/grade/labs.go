package grade

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/intake"
	"github.com/fourth-outcome/labkit/internal/usage"
)

// parseLabs turns --labs into labs of the course: "" or "all", "3",
// "1-4", "1,3", names such as "retry" or "04-retry"; "present" is every lab until the submissions are read
// (see presentLabs).
func parseLabs(spec string) ([]course.Lab, error) {
	if spec == "" || spec == "all" || spec == "present" {
		return course.Built(), nil
	}
	seen := map[int]bool{}
	var out []course.Lab
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		names := []string{lo}
		if _, err := course.Find(part); err == nil {
			names, isRange = []string{part}, false // a lab's name: 04-retry
		}
		if isRange {
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || a > b {
				return nil, usage.Errorf("--labs %q: want a list like 1-4 or 1,3", spec)
			}
			names = nil
			for n := a; n <= b; n++ {
				names = append(names, strconv.Itoa(n))
			}
		}
		for _, n := range names {
			l, err := course.Find(n)
			if err != nil {
				return nil, usage.Errorf("--labs: %v", err)
			}
			if !seen[l.Number] {
				seen[l.Number] = true
				out = append(out, l)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// parseWeights reads --weights, LAB=WEIGHT pairs, into weights by lab
// number.
func parseWeights(spec string) (map[int]float64, error) {
	w := map[int]float64{}
	if spec == "" {
		return w, nil
	}
	for _, part := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(part, "=")
		n, err1 := strconv.Atoi(strings.TrimSpace(k))
		f, err2 := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err1 != nil || err2 != nil || f < 0 {
			return nil, usage.Errorf("--weights %q: want LAB=WEIGHT pairs, e.g. 1=1,2=2", spec)
		}
		w[n] = f
	}
	return w, nil
}

// presentLabs keeps the labs that some submission has files for, leaving
// out a lab whose files are the kit's starter unchanged (a copy of the
// whole release has every lab's folder). With none left, it keeps every
// lab, so that the feedback says what was looked for.
func presentLabs(root string, labs []course.Lab, subs []intake.Submission) []course.Lab {
	var out []course.Lab
	for _, l := range labs {
		for _, s := range subs {
			dir, ok := s.Labs[l.Number]
			if ok && !sameGoFiles(dir, filepath.Join(root, "labs", l.Dir)) {
				out = append(out, l)
				break
			}
		}
	}
	if len(out) == 0 {
		return labs
	}
	return out
}

// sameGoFiles reports whether two folders hold the same non-test .go files,
// byte for byte.
func sameGoFiles(a, b string) bool {
	fa, errA := goSources(a)
	fb, errB := goSources(b)
	if errA != nil || errB != nil || len(fa) != len(fb) {
		return false
	}
	for name, data := range fa {
		if other, ok := fb[name]; !ok || !bytes.Equal(data, other) {
			return false
		}
	}
	return true
}

// goSources reads dir's non-test .go files, by name.
func goSources(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, en := range entries {
		n := en.Name()
		if !en.Type().IsRegular() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		out[n] = data
	}
	return out, nil
}
