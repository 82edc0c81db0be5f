package gradebook

import (
	"fmt"
	"strings"
	"time"

	"github.com/fourth-outcome/labkit/similarity"
)

// lateSummary is summary.md's section on late work: the policy, then every
// submission after its due time.
func lateSummary(students []Student, o Options) string {
	p := o.Late
	if p.Deadline.IsZero() {
		return ""
	}
	var b strings.Builder
	capped := p.Cap
	if capped == 0 {
		capped = 100
	}
	fmt.Fprintf(&b, "\n## Late work\n\nDeadline %s; %s%% off per day begun after it, at most %s%%; %d extension(s).\n\n",
		p.Deadline.UTC().Format(time.RFC3339), num(p.PerDay), num(capped), len(p.Extensions))
	var rows []string
	unknown := 0
	for _, s := range students {
		if s.Err != nil {
			continue
		}
		v := Late(s, o)
		if v.Submitted.IsZero() {
			unknown++
			continue
		}
		if v.Late() {
			total, _ := Total(s, o)
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %d | %s%% | %s → %s |\n", mdCell(s.Name), v.Submitted.UTC().Format(time.RFC3339),
				v.Due.UTC().Format(time.RFC3339), v.DaysLate, num(v.Penalty), num(total), num(Final(s, o))))
		}
	}
	if len(rows) == 0 {
		b.WriteString("No submission came in after its due time.\n")
	} else {
		b.WriteString("| student | submitted | due | days late | penalty | total |\n| --- | --- | --- | ---: | ---: | --- |\n")
		b.WriteString(strings.Join(rows, ""))
	}
	if unknown > 0 {
		fmt.Fprintf(&b, "\n%d submission(s) have no known submission time and are counted on time.\n", unknown)
	}
	return b.String()
}

// similaritySummary is summary.md's section on near-identical code: for
// each lab, the pairs of students whose own code (the starter's left out)
// is near-identical once identifiers and layout are erased (package
// similarity). It is a hint for a human to read both, never a score.
func similaritySummary(students []Student, o Options) string {
	var b strings.Builder
	for _, l := range o.Labs {
		fps := map[string][]uint64{}
		for _, s := range students {
			if fp, ok := s.Prints[l.Number]; ok {
				fps[s.Name] = fp
			}
		}
		pairs := similarity.Pairs(fps)
		if len(pairs) == 0 {
			continue
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "\n## Similar code, for a human to review\n\nPairs whose own code (the starter's left out) is near-identical once identifiers, literals, comments and layout are erased: at least %d%% of the smaller one's fingerprints (k-grams of %d tokens, winnowed over %d) are in the other. Two correct solutions of a small lab can be alike; read both before drawing a conclusion. This changes no score.\n", int(similarity.Threshold*100), similarity.K, similarity.W)
		}
		fmt.Fprintf(&b, "\n### Lab %02d · %s\n\n| student | student | shared |\n| --- | --- | ---: |\n", l.Number, l.Title)
		for _, p := range pairs {
			fmt.Fprintf(&b, "| %s | %s | %d%% |\n", mdCell(p.A), mdCell(p.B), int(p.Overlap*100))
		}
	}
	if b.Len() == 0 {
		return "\n## Similar code, for a human to review\n\nNo pair of submissions has near-identical code of its own.\n"
	}
	return b.String()
}
