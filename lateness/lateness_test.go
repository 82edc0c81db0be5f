package lateness

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestApply(t *testing.T) {
	deadline := time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC)
	p := Policy{Deadline: deadline, PerDay: 10, Cap: 30, Extensions: map[string]time.Duration{"bob": 48 * time.Hour, "s123": 24 * time.Hour}}
	for _, tt := range []struct {
		name    string
		at      time.Time
		ids     []string
		days    int
		penalty float64
	}{
		{"on time", deadline, []string{"ada"}, 0, 0},
		{"a minute late", deadline.Add(time.Minute), []string{"ada"}, 1, 10},
		{"25 hours late", deadline.Add(25 * time.Hour), []string{"ada"}, 2, 20},
		{"a week late, capped", deadline.Add(7 * 24 * time.Hour), []string{"ada"}, 7, 30},
		{"within an extension by name", deadline.Add(47 * time.Hour), []string{"bob"}, 0, 0},
		{"past an extension by ID", deadline.Add(25 * time.Hour), []string{"cy", "s123"}, 1, 10},
		{"time unknown", time.Time{}, []string{"ada"}, 0, 0},
	} {
		v := p.Apply(tt.at, tt.ids...)
		if v.DaysLate != tt.days || v.Penalty != tt.penalty {
			t.Errorf("%s: Apply = %d days, %v%%; want %d days, %v%%", tt.name, v.DaysLate, v.Penalty, tt.days, tt.penalty)
		}
	}
	if v := (Policy{}).Apply(deadline.Add(time.Hour)); v.Late() {
		t.Errorf("Apply without a deadline = %+v, want on time", v)
	}
}

func TestReadExtensionsAndTimes(t *testing.T) {
	ext, err := ReadExtensions(strings.NewReader("# accommodations\nbob, 2d\ns123,36h\n\ncy,1\n"))
	if err != nil || ext["bob"] != 48*time.Hour || ext["s123"] != 36*time.Hour || ext["cy"] != 24*time.Hour {
		t.Errorf("ReadExtensions = %v, %v", ext, err)
	}
	if _, err := ReadExtensions(strings.NewReader("bob soon\n")); !errors.Is(err, ErrBadPolicy) {
		t.Errorf("ReadExtensions(bad line) = %v, want ErrBadPolicy", err)
	}
	times, err := ReadTimes(strings.NewReader("Full name,ID number,Status,Last modified (submission)\nAda Lovelace,1001,Submitted,2026-03-02 10:00\n"), time.UTC)
	want := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	if err != nil || !times["Ada Lovelace"].Equal(want) || !times["1001"].Equal(want) {
		t.Errorf("ReadTimes = %v, %v; want Ada Lovelace and 1001 at %v", times, err, want)
	}
	if _, err := ReadTimes(strings.NewReader("a,b\n1,2\n"), time.UTC); !errors.Is(err, ErrBadPolicy) {
		t.Errorf("ReadTimes(no known columns) = %v, want ErrBadPolicy", err)
	}
}
