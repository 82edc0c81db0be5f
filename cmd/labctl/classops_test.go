package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fourth-outcome/labkit/course"
)

// TestClassOperations grades a class of lab 01 submissions in LMS export
// names as an instructor runs a term: a Moodle folder and a Canvas archive
// with the same code, a student whose name is a spreadsheet formula, a
// late one with an extension file, a pair x.zip and x.tar.gz, and lab 05's
// files in 01-claim/. Then it regrades one student into the same --out,
// grades the class as two shards and merges them, and checks a pinned kit
// version is enforced.
func TestClassOperations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite once per submission")
	}
	root := kitRoot(t)
	class := t.TempDir()
	ref := goFiles(t, filepath.Join(root, "solutions", "01-claim"), false)
	starter := pristineStarter(t, "01-claim", false)
	writeTree(t, filepath.Join(class, "Ada Lovelace_1001_assignsubmission_file_"), prefixed("01-claim/", ref))
	archive(t, filepath.Join(class, "lovelacebob_2002_9001_claim.zip"), prefixed("labs/01-claim/", ref))
	writeTree(t, filepath.Join(class, "=HYPERLINK(1)"), starter)
	writeTree(t, filepath.Join(class, "late"), ref)
	archive(t, filepath.Join(class, "twice.zip"), ref)
	archive(t, filepath.Join(class, "twice.tar.gz"), ref)
	writeTree(t, filepath.Join(class, "mixedup"), prefixed("01-claim/", pristineStarter(t, "05-lease", false)))
	deadline := time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC)
	for _, e := range []string{"Ada Lovelace_1001_assignsubmission_file_", "lovelacebob_2002_9001_claim.zip", "=HYPERLINK(1)", "twice.zip", "twice.tar.gz", "mixedup"} {
		os.Chtimes(filepath.Join(class, e), deadline, deadline)
	}
	os.Chtimes(filepath.Join(class, "late"), deadline.Add(30*time.Hour), deadline.Add(30*time.Hour))
	ext := filepath.Join(t.TempDir(), "extensions.csv")
	os.WriteFile(ext, []byte("# accommodations\n2002,3d\n"), 0o644)

	out := filepath.Join(t.TempDir(), "graded")
	policy := []string{"--deadline", "2026-03-01T23:59:00Z", "--late-per-day", "10", "--late-cap", "50", "--extensions", ext}
	r := labctl(t, root, append([]string{"grade", "1", class, "--out", out, "--timeout", "5m", "--jobs", "1"}, policy...)...)
	if r.code != 1 {
		t.Fatalf("grade: exit %d, want 1 (the pair twice.* is refused)\n%s%s", r.code, r.stdout, r.stderr)
	}
	book := readGradebook(t, out)
	// columns: student folder status lab01 total max id kit rules submitted daysLate penalty final
	for name, want := range map[string]string{"Ada Lovelace": "100", "lovelacebob": "100", "'=HYPERLINK(1)": "0", "late": "100"} {
		if row := book[name]; row == nil || row[3] != want {
			t.Errorf("gradebook row of %s = %v, want lab 01 %s", name, row, want)
		}
	}
	if row := book["Ada Lovelace"]; row == nil || row[6] != "1001" {
		t.Errorf("Moodle's ID: row %v, want id 1001", row)
	}
	if row := book["late"]; row == nil || row[10] != "2" || row[11] != "20" || row[12] != "80" {
		t.Errorf("late's row = %v, want 2 days late, 20%% off, 80", row)
	}
	if row := book["twice"]; row == nil || !strings.Contains(row[2], "twice.tar.gz, twice.zip") {
		t.Errorf("twice's row = %v, want one row refusing both entries by name", row)
	}
	if row := book["mixedup"]; row == nil || !strings.Contains(row[2], "wrong lab: 01-claim/ holds lab 05") {
		t.Errorf("mixedup's row = %v, want not graded, naming the wrong lab", row)
	}
	fb, _ := os.ReadFile(filepath.Join(out, "mixedup", "feedback.md"))
	if !strings.Contains(string(fb), "wrong lab: 01-claim/ holds lab 05") {
		t.Errorf("mixedup/feedback.md does not name the wrong lab:\n%s", fb)
	}
	if !strings.Contains(string(fb), "Graded with kit ") {
		t.Errorf("feedback.md does not name the kit version:\n%s", fb)
	}
	summary, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	for _, want := range []string{"| Ada Lovelace | late | 100% |", "| Ada Lovelace | lovelacebob | 100% |", "## Late work"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, summary)
		}
	}
	whole := hashOutputs(t, out)

	// Regrade one: everyone else's feedback and rows stay.
	r = labctl(t, root, "grade", "1", class, "--out", out, "--student", "late", "--force", "--timeout", "5m", "--jobs", "1")
	if r.code != 0 {
		t.Fatalf("grade --student late: exit %d\n%s", r.code, r.stderr)
	}
	if again := readGradebook(t, out); len(again) != len(book) {
		t.Errorf("after regrading one, the gradebook has %d rows, want %d", len(again), len(book))
	}
	if after := hashOutputs(t, out); !mapsEqual(whole, after) {
		t.Errorf("regrading one student with the same kit changed the outputs:\nbefore %v\nafter  %v", whole, after)
	}

	// Two shards, merged, give the one-machine outputs byte for byte.
	var shards []string
	for _, sh := range []string{"1/2", "2/2"} {
		dir := filepath.Join(t.TempDir(), "shard")
		if err := os.CopyFS(filepath.Join(dir, ".cache"), os.DirFS(filepath.Join(out, ".cache"))); err != nil {
			t.Fatal(err)
		}
		r = labctl(t, root, append([]string{"grade", "1", class, "--out", dir, "--shard", sh, "--timeout", "5m", "--jobs", "1"}, policy...)...)
		if r.code > 1 {
			t.Fatalf("grade --shard %s: exit %d\n%s", sh, r.code, r.stderr)
		}
		shards = append(shards, dir)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	r = labctl(t, root, append([]string{"gradebook", "merge", "--out", merged}, shards...)...)
	if r.code != 0 {
		t.Fatalf("gradebook merge: exit %d\n%s", r.code, r.stderr)
	}
	if got := hashOutputs(t, merged); !mapsEqual(whole, got) {
		t.Errorf("the merge of two shards differs from one machine:\none    %v\nmerged %v", whole, got)
	}

	r = labctl(t, root, "grade", "1", class, "--out", out, "--kit-version", "0000000deadbeef")
	if r.code != 2 || !strings.Contains(r.stderr, "--kit-version") {
		t.Errorf("grade --kit-version of another kit: exit %d, %q; want 2 naming the flag", r.code, r.stderr)
	}
}

// TestLab10MemoryHalf grades lab 10 with the reference's memory backend
// and engine beside the starter's unstarted Redis backend: every
// <case>_on_memory passes and earns its half, every Redis case fails.
func TestLab10MemoryHalf(t *testing.T) {
	if testing.Short() {
		t.Skip("runs lab 10's suite")
	}
	root := kitRoot(t)
	class := t.TempDir()
	files := goFiles(t, filepath.Join(root, "solutions", "10-engine"), false)
	files["redis.go"] = pristineStarter(t, "10-engine", false)["redis.go"]
	writeTree(t, filepath.Join(class, "memory-only", "10-engine"), files)
	out := filepath.Join(t.TempDir(), "graded")
	r := labctl(t, root, "grade", "10", class, "--out", out, "--timeout", "5m")
	if r.code != 0 {
		t.Fatalf("grade 10: exit %d\n%s", r.code, r.stderr)
	}
	want := 0
	for _, c := range labFor(t, 10).Cases {
		if strings.HasSuffix(c.Name, "_on_memory") {
			want += c.Points
		}
	}
	if row := readGradebook(t, out)["memory-only"]; row == nil || row[3] != strconv.Itoa(want) || want == 0 {
		t.Errorf("memory-only: %v, want lab 10 %d (the memory halves)", row, want)
	}
}

func labFor(tb testing.TB, n int) course.Lab {
	tb.Helper()
	l, err := course.Find(strconv.Itoa(n))
	if err != nil {
		tb.Fatal(err)
	}
	return l
}
