package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fourth-outcome/labkit/gradebook"
)

// zipDir writes the files of dir into a .zip at path.
func zipDir(tb testing.TB, dir, path string) {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = os.WriteFile(path, buf.Bytes(), 0o644)
	}
	if err != nil {
		tb.Fatalf("zip %s: %v", dir, err)
	}
}

// hashOutputs hashes the deterministic outputs of a grading: everything
// but report.json, results.json, the cache and the docs.
func hashOutputs(tb testing.TB, out string) map[string]string {
	tb.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		if d.IsDir() && (rel == ".cache" || rel == "docs") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() == "report.json" || d.Name() == "results.json" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		sums[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return sums
}

func readGradebook(tb testing.TB, out string) map[string][]string {
	tb.Helper()
	f, err := os.Open(filepath.Join(out, "gradebook.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	byStudent := map[string][]string{}
	for _, r := range rows[1:] {
		byStudent[r[0]] = r
	}
	return byStudent
}

// TestGradeBatch grades the grader's hostile submissions as a class, plus a
// perfect one as a folder and as a .zip, an empty folder and a stale folder
// from an earlier run, with the output folder inside the class folder: every
// one gets a result and feedback files, none stops the batch, a rerun
// regrades nothing and writes the same bytes.
func TestGradeBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite once per submission")
	}
	root := kitRoot(t)
	subs := filepath.Join(root, "grader", "testdata", "submissions")
	class := t.TempDir()
	entries, _ := os.ReadDir(subs)
	for _, e := range entries {
		if e.Name() == "huge-output" || e.Name() == "big-alloc" {
			continue // the grader's own tests cover the limits
		}
		if err := os.CopyFS(filepath.Join(class, e.Name()), os.DirFS(filepath.Join(subs, e.Name()))); err != nil {
			t.Fatal(err)
		}
	}
	perfect := filepath.Join(class, "perfect", "labs", "01-claim")
	if err := os.MkdirAll(perfect, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(root, "solutions", "01-claim", "claim.go"), filepath.Join(perfect, "claim.go"))
	zipDir(t, filepath.Join(class, "perfect"), filepath.Join(class, "zipped.zip"))
	if err := os.MkdirAll(filepath.Join(class, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(class, "graded") // inside the class folder: never graded as a student
	if err := os.MkdirAll(filepath.Join(out, "gone"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "gone", "feedback.md"), []byte("stale"), 0o644)

	r := labctl(t, root, "grade", "1", class, "--out", out, "--timeout", "20s")
	if r.code != 1 || !strings.Contains(r.stderr, "1 submission(s) could not be graded") {
		t.Fatalf("grade: exit %d, want 1 with the empty folder not graded\n%s%s", r.code, r.stdout, r.stderr)
	}
	book := readGradebook(t, out)
	if len(book) != len(entries)-2+3 { // the hostile ones, perfect, zipped, empty
		t.Errorf("gradebook has %d students, want %d: %v", len(book), len(entries)+1, book)
	}
	for student, row := range book {
		wantScore := "0"
		switch student {
		case "perfect", "zipped":
			wantScore = "100"
		case "empty":
			wantScore = ""
		case "data-race":
			wantScore = row[3] // races score what their passing cases earn
		}
		if row[3] != wantScore {
			t.Errorf("gradebook row %q: score %q, want %q", row, row[3], wantScore)
		}
		for _, f := range []string{"feedback.md", "feedback.html", "results.json", "report.json"} {
			if _, err := os.Stat(filepath.Join(out, row[1], f)); err != nil {
				t.Errorf("%s: %v", student, err)
			}
		}
	}
	if _, ok := book["graded"]; ok {
		t.Error("the output folder inside the class folder was graded as a student")
	}
	if _, err := os.Stat(filepath.Join(out, "gone")); err == nil {
		t.Error("the stale folder gone/ of an earlier run is still in --out")
	}
	var gs gradebook.GradescopeResults
	data, _ := os.ReadFile(filepath.Join(out, "perfect", "results.json"))
	if err := json.Unmarshal(data, &gs); err != nil || gs.Score != 100 || gs.OutputFormat != "md" || len(gs.Tests) == 0 || gs.Tests[0].Visibility == "" {
		t.Errorf("perfect/results.json = %+v, %v; want score 100 in md with visible tests", gs, err)
	}
	for _, f := range []string{"perfect/results.json", "perfect/feedback.md", "summary.md"} {
		data, _ := os.ReadFile(filepath.Join(out, f))
		if strings.Contains(string(data), root) {
			t.Errorf("%s shows the kit's path %s", f, root)
		}
	}
	first := hashOutputs(t, out)

	again := labctl(t, root, "grade", "--labs", "1", class, "--out", out, "--timeout", "20s")
	if !strings.Contains(again.stdout, "runs reused") || strings.Contains(again.stdout, "(0 runs reused") {
		t.Errorf("rerun: %s%s, want every run reused", again.stdout, again.stderr)
	}
	if second := hashOutputs(t, out); !mapsEqual(first, second) {
		t.Errorf("rerun changed the outputs:\nfirst  %v\nsecond %v", first, second)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestGradeUsage(t *testing.T) {
	root := kitRoot(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"grade", "--labs", "9-2", "x"}, "--labs"},
		{[]string{"grade", "--labs", "1", "1", "x"}, "either LAB or --labs"},
		{[]string{"grade", "--sandbox", "maybe", root}, "want auto, bwrap or off"},
		{[]string{"grade", "--weights", "1=x", root}, "--weights"},
		{[]string{"grade", "--disk", "0", root}, "--disk"},
		{[]string{"grade", "--sandbox", "off", "--run-as", "no-such-user-here", root}, "--run-as"},
	} {
		r := labctl(t, root, tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("labctl %v: exit %d, stderr %q; want 2 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}
