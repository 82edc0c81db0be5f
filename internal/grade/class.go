package grade

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/gradebook"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/intake"
	"github.com/fourth-outcome/labkit/internal/usage"
	"github.com/fourth-outcome/labkit/lateness"
	"github.com/fourth-outcome/labkit/similarity"
)

// parseShard reads --shard I/N; 0, 0 when unset.
func parseShard(spec string) (i, n int, err error) {
	if spec == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(spec, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, usage.Errorf("grade: --shard %q: want I/N with 1 <= I <= N, e.g. 2/4", spec)
	}
	return i, n, nil
}

// selectSubmissions keeps the submissions --student names (by name, ID,
// entry or folder), then share i of n of those (every n-th, in the order
// of the entries, starting at the i-th), so that the shards of a class
// grade each student once.
func selectSubmissions(subs []intake.Submission, students string, i, n int) ([]intake.Submission, error) {
	if students != "" {
		want := map[string]bool{}
		for _, s := range strings.Split(students, ",") {
			want[strings.TrimSpace(s)] = true
		}
		var kept []intake.Submission
		for _, s := range subs {
			if want[s.Student] || (s.ID != "" && want[s.ID]) || want[s.Entry] || want[gradebook.Dir(s.Student)] {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			return nil, usage.Errorf("grade: --student %s: no such submission in the class folder", students)
		}
		subs = kept
	}
	if n == 0 {
		return subs, nil
	}
	var share []intake.Submission
	for k, s := range subs {
		if k%n == i-1 {
			share = append(share, s)
		}
	}
	return share, nil
}

// latePolicy is the late-work policy of the flags, or prev (the one
// Out was graded with) when no --deadline is given.
func (o Options) latePolicy(prev lateness.Policy) (lateness.Policy, error) {
	if o.Deadline == "" {
		if o.Extensions != "" {
			return prev, usage.Errorf("grade: --extensions needs a --deadline")
		}
		return prev, nil
	}
	d, err := lateness.ParseTime(o.Deadline, time.UTC)
	if err != nil {
		return prev, usage.Errorf("grade: --deadline: %v", err)
	}
	if o.LatePerDay < 0 || o.LateCap < 0 || o.LateCap > 100 {
		return prev, usage.Errorf("grade: --late-per-day and --late-cap are percents from 0 to 100")
	}
	p := lateness.Policy{Deadline: d.UTC(), PerDay: o.LatePerDay, Cap: o.LateCap}
	if o.LateCap == 0 {
		p.Cap = 0.0001 // a cap of 0: no penalty, but the days late still shown
	}
	if o.Extensions != "" {
		f, err := os.Open(o.Extensions)
		if err != nil {
			return prev, usage.Errorf("grade: --extensions: %v", err)
		}
		defer f.Close()
		if p.Extensions, err = lateness.ReadExtensions(f); err != nil {
			return prev, usage.Errorf("grade: --extensions: %v", err)
		}
	}
	return p, nil
}

// submittedFromLMS sets each submission's time from an LMS's CSV export,
// matched by the student's name, ID or entry.
func submittedFromLMS(path string, subs []intake.Submission) error {
	f, err := os.Open(path)
	if err != nil {
		return usage.Errorf("grade: --submitted: %v", err)
	}
	defer f.Close()
	times, err := lateness.ReadTimes(f, time.UTC)
	if err != nil {
		return usage.Errorf("grade: --submitted: %v", err)
	}
	for i := range subs {
		for _, k := range []string{subs[i].ID, subs[i].Student, subs[i].Entry} {
			if t, ok := times[k]; ok && k != "" {
				subs[i].Submitted = t.UTC()
				break
			}
		}
	}
	return nil
}

// fingerprints are the similarity fingerprints of each lab's files in the
// submission, without those of the lab's starter.
func fingerprints(root string, labs []course.Lab, sub intake.Submission) map[int][]uint64 {
	out := map[int][]uint64{}
	for _, l := range labs {
		dir, ok := sub.Labs[l.Number]
		if !ok {
			continue
		}
		files, err := goSources(dir)
		if err != nil {
			continue
		}
		starter, _ := goSources(filepath.Join(root, "labs", l.Dir))
		out[l.Number] = similarity.Without(similarity.Fingerprints(files), similarity.Fingerprints(starter))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// carryLabs gives st a result for each of labs: the one graded now, else
// the one of its last grade prev (a regrade of fewer labs keeps the
// others), else Missing.
func carryLabs(st, prev gradebook.Student, labs []grader.Lab) gradebook.Student {
	if st.Err != nil {
		return st
	}
	var out []gradebook.Result
	for _, l := range labs {
		r := gradebook.Result{Student: st.Name, Lab: l, Missing: true}
		found := false
		for _, got := range st.Labs {
			if got.Lab.Number == l.Number {
				r, found = got, true
			}
		}
		if !found {
			for _, got := range prev.Labs {
				if got.Lab.Number == l.Number && !got.Missing {
					r = got
					if fp, ok := prev.Prints[l.Number]; ok {
						if st.Prints == nil {
							st.Prints = map[int][]uint64{}
						}
						st.Prints[l.Number] = fp
					}
				}
			}
		}
		out = append(out, r)
	}
	st.Labs = out
	return st
}

// WriteClassFiles renders the class files of out from the students'
// report.json alone, as a merge of shards does, so that a partial regrade,
// a merge and one grading of the whole class write the same bytes.
func WriteClassFiles(out string, o gradebook.Options) error {
	all, err := gradebook.LoadStudents(out, o.Labs)
	if err != nil {
		return err
	}
	o.Scrub = nil // report.json is scrubbed already
	if err := gradebook.WriteClass(out, all, o); err != nil {
		return err
	}
	return gradebook.WriteClassFile(out, o.ClassFile())
}

// keepLabs leaves in each submission only the labs graded; one left with
// none cannot be graded, as intake would have said.
func keepLabs(subs []intake.Submission, labs []intake.Lab) {
	graded := map[int]bool{}
	for _, l := range labs {
		graded[l.Number] = true
	}
	for i := range subs {
		if subs[i].Err != nil {
			continue
		}
		for n := range subs[i].Labs {
			if !graded[n] {
				delete(subs[i].Labs, n)
			}
		}
		if len(subs[i].Labs) == 0 {
			why := "looked for labs/NN-name/, NN-name/ and .go files declaring a lab's package"
			for _, n := range subs[i].Notes {
				if strings.HasPrefix(n, "wrong lab: ") {
					why = n
				}
			}
			subs[i].Err = fmt.Errorf("%w graded here (%s)", intake.ErrNoLabs, why)
		}
	}
}
