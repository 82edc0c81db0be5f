package grade

import (
	"errors"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/intake"
	"github.com/fourth-outcome/labkit/internal/usage"
)

// TestParseShard: --shard is I/N with 1 <= I <= N; anything else is a
// usage error.
func TestParseShard(t *testing.T) {
	if i, n, err := parseShard(""); i != 0 || n != 0 || err != nil {
		t.Errorf(`parseShard("") = %d, %d, %v; want 0, 0, nil`, i, n, err)
	}
	if i, n, err := parseShard("2/4"); i != 2 || n != 4 || err != nil {
		t.Errorf(`parseShard("2/4") = %d, %d, %v; want 2, 4, nil`, i, n, err)
	}
	for _, bad := range []string{"0/2", "3/2", "1", "a/b", "1/0"} {
		var ue *usage.Error
		if _, _, err := parseShard(bad); !errors.As(err, &ue) {
			t.Errorf("parseShard(%q) = %v, want a usage error", bad, err)
		}
	}
}

// TestSelectSubmissions: --student picks by name, ID, entry or folder;
// the shards of a class share it out, each student once.
func TestSelectSubmissions(t *testing.T) {
	subs := []intake.Submission{
		{Student: "Ada Lovelace", ID: "1001", Entry: "Ada Lovelace_1001_assignsubmission_file_"},
		{Student: "bob", Entry: "bob.zip"},
		{Student: "carol", Entry: "carol"},
	}
	names := func(ss []intake.Submission) string {
		var n []string
		for _, s := range ss {
			n = append(n, s.Student)
		}
		return strings.Join(n, ",")
	}
	if got, err := selectSubmissions(subs, "1001, bob.zip", 0, 0); err != nil || names(got) != "Ada Lovelace,bob" {
		t.Errorf("--student 1001,bob.zip = %s, %v; want Ada Lovelace,bob", names(got), err)
	}
	if _, err := selectSubmissions(subs, "nobody", 0, 0); err == nil {
		t.Error("--student nobody: no error, want a usage error")
	}
	var all []string
	for i := 1; i <= 2; i++ {
		got, err := selectSubmissions(subs, "", i, 2)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, names(got))
	}
	if strings.Join(all, "|") != "Ada Lovelace,carol|bob" {
		t.Errorf("shards 1/2 and 2/2 = %q, want every student once", all)
	}
}

// TestParseWeights: LAB=WEIGHT pairs; a negative or malformed weight is a
// usage error.
func TestParseWeights(t *testing.T) {
	w, err := parseWeights("1=1, 2=2.5")
	if err != nil || w[1] != 1 || w[2] != 2.5 {
		t.Errorf(`parseWeights("1=1, 2=2.5") = %v, %v`, w, err)
	}
	for _, bad := range []string{"1=x", "1", "1=-1"} {
		if _, err := parseWeights(bad); err == nil {
			t.Errorf("parseWeights(%q): no error, want a usage error", bad)
		}
	}
}
