package intake

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testLabs = []Lab{{Number: 1, Dir: "01-claim", Package: "claim"}, {Number: 4, Dir: "04-retry", Package: "retry"}}

const claimSrc = "package claim\n"

func writeFile(tb testing.TB, path, body string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
}

type entry struct {
	name, body, link string
}

func writeZip(tb testing.TB, path string, entries []entry) {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		body := e.body
		if e.link != "" {
			h.SetMode(os.ModeSymlink | 0o777)
			body = e.link
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, path, buf.String())
}

func writeTarGz(tb testing.TB, path string, entries []entry) {
	tb.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		if e.link != "" {
			h = &tar.Header{Name: e.name, Linkname: e.link, Typeflag: tar.TypeSymlink}
		}
		if err := tw.WriteHeader(h); err != nil {
			tb.Fatal(err)
		}
		tw.Write([]byte(e.body))
	}
	tw.Close()
	gz.Close()
	writeFile(tb, path, buf.String())
}

func TestReadEveryKindOfSubmission(t *testing.T) {
	class := t.TempDir()
	writeFile(t, filepath.Join(class, "ada", "claim.go"), claimSrc)                     // loose files, matched by package
	writeFile(t, filepath.Join(class, "ada", "claim_test.go"), claimSrc)                // ignored, noted
	writeFile(t, filepath.Join(class, "bob", "labs", "01-claim", "store.go"), claimSrc) // a whole kit copy
	writeFile(t, filepath.Join(class, "bob", "labs", "04-retry", "retry.go"), "package retry\n")
	writeFile(t, filepath.Join(class, "bob", "solutions", "01-claim", "claim.go"), claimSrc)
	writeZip(t, filepath.Join(class, "chloé.zip"), []entry{{name: "src/claim.go", body: claimSrc}, {name: "src/link.go", link: "claim.go"}})
	writeTarGz(t, filepath.Join(class, "dan.tar.gz"), []entry{{name: "01-claim/claim.go", body: claimSrc}})
	writeZip(t, filepath.Join(class, "eve-slip.zip"), []entry{{name: "../../evil.go", body: claimSrc}})
	writeTarGz(t, filepath.Join(class, "fay-abs.tar.gz"), []entry{{name: "/etc/evil.go", body: claimSrc}})
	writeTarGz(t, filepath.Join(class, "gus-link.tar.gz"), []entry{{name: "claim.go", link: "/etc/passwd"}})
	writeZip(t, filepath.Join(class, "hal-bomb.zip"), []entry{{name: "claim.go", body: claimSrc + strings.Repeat("/", 2<<20)}})
	if err := os.MkdirAll(filepath.Join(class, "ivy-empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(class, "notes.txt"), "hello")
	writeFile(t, filepath.Join(elsewhere(t), "claim.go"), claimSrc)
	if err := os.Symlink(elsewhere(t), filepath.Join(class, "jo-linked")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(class, "graded", "x", "claim.go"), claimSrc) // the output folder

	scratch := t.TempDir()
	subs, err := Read(class, testLabs, scratch, Limits{MaxBytes: 1 << 20}, filepath.Join(class, "graded"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Submission{}
	for _, s := range subs {
		got[s.Student] = s
	}
	if _, ok := got["graded"]; ok {
		t.Error("Read() graded the output folder as a student")
	}
	wantErr := map[string]error{
		"eve-slip": ErrUnsafePath, "fay-abs": ErrUnsafePath, "gus-link": ErrUnsafePath,
		"hal-bomb": ErrTooBig, "ivy-empty": ErrNoLabs, "notes.txt": ErrNotSubmission,
	}
	wantLabs := map[string][]int{"ada": {1}, "bob": {1, 4}, "chloé": {1}, "dan": {1}, "jo-linked": {1}}
	if len(subs) != len(wantErr)+len(wantLabs) {
		t.Errorf("Read() = %d submissions, want %d", len(subs), len(wantErr)+len(wantLabs))
	}
	for name, want := range wantErr {
		if s, ok := got[name]; !ok || !errors.Is(s.Err, want) {
			t.Errorf("Read(): %s Err = %v, want %v", name, s.Err, want)
		}
	}
	for name, want := range wantLabs {
		s := got[name]
		if s.Err != nil {
			t.Errorf("Read(): %s Err = %v, want nil", name, s.Err)
			continue
		}
		for _, n := range want {
			if !strings.HasPrefix(s.Labs[n], scratch) {
				t.Errorf("Read(): %s lab %d dir = %q, want one under the scratch directory", name, n, s.Labs[n])
			}
		}
		if len(s.Labs) != len(want) {
			t.Errorf("Read(): %s labs = %v, want %v", name, s.Labs, want)
		}
	}
	if d := got["bob"].Labs[1]; !strings.HasSuffix(d, filepath.Join("labs", "01-claim")) {
		t.Errorf("Read(): bob lab 1 = %s, want labs/01-claim (not solutions/)", d)
	}
	if !strings.Contains(strings.Join(got["chloé"].Notes, "\n"), "link") {
		t.Errorf("Read(): chloé notes = %q, want the symlink reported", got["chloé"].Notes)
	}
	if !strings.Contains(strings.Join(got["ada"].Notes, "\n"), "test file") {
		t.Errorf("Read(): ada notes = %q, want the ignored test file reported", got["ada"].Notes)
	}
	// Nothing of the refused archives was written.
	if _, err := os.Stat(filepath.Join(scratch, "..", "evil.go")); err == nil {
		t.Error("zip-slip wrote outside the scratch directory")
	}
}

var elsewhereDir string

func elsewhere(tb testing.TB) string {
	if elsewhereDir == "" {
		elsewhereDir = tb.TempDir()
	}
	return elsewhereDir
}

func TestParseName(t *testing.T) {
	for _, tt := range []struct{ entry, student, id, at string }{
		{"Ada Lovelace_1001_assignsubmission_file_", "Ada Lovelace", "1001", ""},
		{"lovelacebob_2002_9001_claim.zip", "lovelacebob", "2002", ""},
		{"lovelacebob_LATE_2002_9001_claim.zip", "lovelacebob", "2002", ""},
		{"Lab 1_alovelace_attempt_2026-03-01-23-59-00_claim.zip", "alovelace", "alovelace", "2026-03-01T23:59:00Z"},
		{"submission_123456789", "submission_123456789", "123456789", ""},
		{"chloé.tar.gz", "chloé", "", ""},
	} {
		student, id, at := ParseName(tt.entry)
		stamp := ""
		if !at.IsZero() {
			stamp = at.Format(time.RFC3339)
		}
		if student != tt.student || id != tt.id || stamp != tt.at {
			t.Errorf("ParseName(%q) = %q, %q, %q; want %q, %q, %q", tt.entry, student, id, stamp, tt.student, tt.id, tt.at)
		}
	}
}

func TestOneIdentityAndWrongLab(t *testing.T) {
	class := t.TempDir()
	writeZip(t, filepath.Join(class, "x.zip"), []entry{{name: "claim.go", body: claimSrc}})
	writeTarGz(t, filepath.Join(class, "x.tar.gz"), []entry{{name: "claim.go", body: claimSrc}})
	writeFile(t, filepath.Join(class, "mixed", "04-retry", "claim.go"), claimSrc)
	subs, err := Read(class, testLabs, t.TempDir(), Limits{})
	if err != nil || len(subs) != 2 {
		t.Fatalf("Read = %d submissions, %v; want x once and mixed", len(subs), err)
	}
	x, mixed := subs[1], subs[0]
	if !errors.Is(x.Err, ErrDuplicate) || !strings.Contains(x.Err.Error(), "x.tar.gz, x.zip") {
		t.Errorf("x: Err = %v, want ErrDuplicate naming both entries", x.Err)
	}
	if _, ok := mixed.Labs[1]; !ok || len(mixed.Labs) != 1 || !strings.Contains(strings.Join(mixed.Notes, "\n"), "wrong lab: 04-retry/ holds lab 01's files") {
		t.Errorf("mixed: labs %v, notes %q; want lab 01 only, named a wrong lab", mixed.Labs, mixed.Notes)
	}
}
