// Package lateness applies a late-work policy: a deadline, a penalty per
// day late (each day begun counts) up to a cap, and per-student
// extensions, to the time each submission came in. It decides the
// penalty; the gradebook shows it beside the score.
package lateness

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrBadPolicy is wrapped by every error about a policy or its files.
var ErrBadPolicy = errors.New("bad late-work policy")

// Policy is the late-work rule of an assignment. The zero Policy has no
// deadline: nothing is late.
type Policy struct {
	Deadline time.Time `json:"deadline,omitzero"`
	// PerDay is the share of the total taken off per day late, in
	// percent; Cap is the most taken off, in percent (100 when 0).
	PerDay float64 `json:"per_day,omitempty"`
	Cap    float64 `json:"cap,omitempty"`
	// Extensions gives some students more time, by student name or ID.
	Extensions map[string]time.Duration `json:"extensions,omitempty"`
}

// Verdict is how late one submission was and what it costs.
type Verdict struct {
	Submitted time.Time // zero when unknown
	Due       time.Time // the deadline with the student's extension
	DaysLate  int       // days begun after Due; 0 when on time or unknown
	Penalty   float64   // percent of the total taken off
}

// Late reports whether the submission came in after its due time.
func (v Verdict) Late() bool { return v.DaysLate > 0 }

// Apply is the verdict for a submission made at submitted by a student
// known by the given names (a name, an LMS ID).
func (p Policy) Apply(submitted time.Time, names ...string) Verdict {
	v := Verdict{Submitted: submitted}
	if p.Deadline.IsZero() {
		return v
	}
	v.Due = p.Deadline
	for _, n := range names {
		if d, ok := p.Extensions[n]; ok && n != "" {
			v.Due = p.Deadline.Add(d)
			break
		}
	}
	if submitted.IsZero() || !submitted.After(v.Due) {
		return v
	}
	v.DaysLate = int(math.Ceil(submitted.Sub(v.Due).Hours() / 24))
	limit := p.Cap
	if limit == 0 {
		limit = 100
	}
	v.Penalty = min(float64(v.DaysLate)*p.PerDay, limit)
	return v
}

// ParseTime reads a time as RFC 3339, "2006-01-02 15:04" or "2006-01-02"
// (the end of that day), in loc when it names no zone.
func ParseTime(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "Monday, 2 January 2006, 3:04 PM"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return t.Add(24*time.Hour - time.Second), nil
	}
	return time.Time{}, fmt.Errorf("%w: time %q: want RFC 3339 (2026-03-01T23:59:00Z), 2026-03-01 23:59 or 2026-03-01", ErrBadPolicy, s)
}

// ReadExtensions reads a small file of extensions, one a line: a student's
// name or ID, a comma, then a duration ("48h") or a number of days
// ("2d", "2"). Blank lines and lines starting with # are skipped.
func ReadExtensions(r io.Reader) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		who, extra, ok := strings.Cut(line, ",")
		who, extra = strings.TrimSpace(who), strings.TrimSpace(extra)
		d, err := parseExtra(extra)
		if !ok || who == "" || err != nil {
			return nil, fmt.Errorf("%w: extensions line %d %q: want STUDENT,DURATION (48h, 2d or 2)", ErrBadPolicy, n, line)
		}
		out[who] = d
	}
	return out, sc.Err()
}

func parseExtra(s string) (time.Duration, error) {
	if days, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64); err == nil && days >= 0 {
		return time.Duration(days * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: %q", ErrBadPolicy, s)
	}
	return d, nil
}

// ReadTimes reads submission times from an LMS's CSV export: the column
// whose header names the student ("student", "name", "full name",
// "username", "id", "student id", "sis user id", "email") and the one that
// names the time ("submitted", "submitted at", "submission time", "last
// modified", "date submitted", "timestamp"), matched without case. Each
// key column's values map to the time.
func ReadTimes(r io.Reader, loc *time.Location) (map[string]time.Time, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%w: submission times: %v", ErrBadPolicy, err)
	}
	if len(rows) == 0 {
		return map[string]time.Time{}, nil
	}
	var keys []int
	timeCol := -1
	for i, h := range rows[0] {
		switch strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))) {
		case "student", "name", "full name", "username", "id", "student id", "id number", "sis user id", "email", "email address":
			keys = append(keys, i)
		case "submitted", "submitted at", "submission time", "last modified", "last modified (submission)", "date submitted", "timestamp", "time":
			timeCol = i
		}
	}
	if len(keys) == 0 || timeCol < 0 {
		return nil, fmt.Errorf("%w: submission times: the header %q names no student column or no time column", ErrBadPolicy, rows[0])
	}
	out := map[string]time.Time{}
	for n, row := range rows[1:] {
		if timeCol >= len(row) || strings.TrimSpace(row[timeCol]) == "" {
			continue
		}
		t, err := ParseTime(row[timeCol], loc)
		if err != nil {
			return nil, fmt.Errorf("submission times, row %d: %w", n+2, err)
		}
		for _, k := range keys {
			if k < len(row) && strings.TrimSpace(row[k]) != "" {
				out[strings.TrimSpace(row[k])] = t
			}
		}
	}
	return out, nil
}
