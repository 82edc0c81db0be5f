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
