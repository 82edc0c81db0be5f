// Package intake turns a folder of class submissions into one private
// directory per student, ready to grade: each submission is a folder, a .zip
// or a .tar.gz, named after the student. Archives are checked before
// anything is written (no ../, no absolute paths, no links pointing
// outside), extraction is capped in size and file count, symlinks are
// reported rather than followed, and each lab's files are found in
// labs/NN-name/, NN-name/, or by their package clause.
package intake

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Lab is what intake needs to know of a lab to find its files.
type Lab struct {
	Number  int
	Dir     string // "01-claim"
	Package string // the Go package name, "claim"
}

// Limits caps what one submission may unpack to.
type Limits struct {
	MaxBytes int64 // total bytes of regular files (default 64 MiB)
	MaxFiles int   // number of entries (default 5000)
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes == 0 {
		l.MaxBytes = 64 << 20
	}
	if l.MaxFiles == 0 {
		l.MaxFiles = 5000
	}
	return l
}

// Submission is one entry of the class folder after intake.
type Submission struct {
	// Student is who the submission is from: the name in an LMS export
	// name (see ParseName), else the entry's name without its extension.
	Student string
	Entry   string // the entry's name in the class folder
	ID      string // the student ID an LMS export name carries, if any
	// Submitted is when the submission came in: the time a Blackboard
	// export name carries, else the entry's modification time.
	Submitted time.Time
	// Labs maps a lab number to a directory holding that lab's non-test
	// .go files, inside the submission's private copy.
	Labs map[int]string
	// Notes are things the instructor should know that did not stop
	// intake: symlinks left out, test files ignored.
	Notes []string
	// Err says why the submission cannot be graded at all.
	Err error
}

// The reasons a submission is refused; each error wraps one.
var (
	ErrUnsafePath    = errors.New("unsafe path in the submission")
	ErrTooBig        = errors.New("the submission unpacks to more than the limit")
	ErrNoLabs        = errors.New("no Go files for any lab")
	ErrNotSubmission = errors.New("not a folder, .zip or .tar.gz")
	ErrBadArchive    = errors.New("the archive cannot be read")
	// ErrDuplicate refuses two entries of one student (x.zip and
	// x.tar.gz): which one to grade is the instructor's call.
	ErrDuplicate = errors.New("more than one submission for the student")
)

// Read takes every entry of classDir except hidden ones and those whose
// absolute path is in skip (the output folder, when it is inside), and
// copies or unpacks each into its own directory under scratch. Entries come
// back sorted by name, one per entry, each with its labs or its Err.
func Read(classDir string, labs []Lab, scratch string, lim Limits, skip ...string) ([]Submission, error) {
	lim = lim.withDefaults()
	entries, err := os.ReadDir(classDir)
	if err != nil {
		return nil, fmt.Errorf("read submissions: %w", err)
	}
	skipSet := map[string]bool{}
	for _, s := range skip {
		if abs, err := filepath.Abs(s); err == nil {
			skipSet[abs] = true
		}
	}
	byStudent := map[string][]classEntry{}
	for _, e := range entries {
		name := e.Name()
		full := filepath.Join(classDir, name)
		if strings.HasPrefix(name, ".") {
			continue
		}
		if abs, err := filepath.Abs(full); err == nil && skipSet[abs] {
			continue
		}
		info, _ := e.Info()
		student, _, _ := ParseName(name)
		byStudent[student] = append(byStudent[student], classEntry{name, info})
	}
	// In the order of the entries, so that each submission's scratch
	// folder (and any path a report shows) is the same from run to run
	// and from shard to shard.
	names := make([]string, 0, len(byStudent))
	for student := range byStudent {
		names = append(names, student)
	}
	sort.Slice(names, func(a, b int) bool { return minEntry(byStudent[names[a]]) < minEntry(byStudent[names[b]]) })
	var out []Submission
	i := 0
	for _, student := range names {
		group := byStudent[student]
		sort.Slice(group, func(a, b int) bool { return group[a].name < group[b].name })
		name := group[0].name
		_, id, stamp := ParseName(name)
		s := Submission{Student: student, Entry: name, ID: id, Labs: map[int]string{}, Submitted: stamp}
		if s.Submitted.IsZero() && group[0].info != nil {
			s.Submitted = group[0].info.ModTime().UTC().Truncate(time.Second)
		}
		if len(group) > 1 {
			var names []string
			for _, g := range group {
				names = append(names, g.name)
			}
			s.Err = fmt.Errorf("%w: %s are all %s's; keep one of them in the class folder and grade again", ErrDuplicate, strings.Join(names, ", "), student)
			out = append(out, s)
			continue
		}
		i++
		dest := filepath.Join(scratch, fmt.Sprintf("s%03d", i))
		s.Err = unpack(filepath.Join(classDir, name), dest, lim, &s)
		if s.Err == nil {
			s.Err = findLabs(dest, labs, &s)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Entry < out[j].Entry })
	return out, nil
}

// unpack copies a folder or extracts an archive into dest.
func unpack(src, dest string, lim Limits, s *Submission) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		// A link in the class folder is the instructor's own: follow it.
		target, _ := os.Readlink(src)
		s.Notes = append(s.Notes, fmt.Sprintf("%s is a symlink to %s; graded what it points to", s.Entry, target))
		resolved, err := filepath.EvalSymlinks(src)
		if err == nil {
			fi, err = os.Stat(resolved)
		}
		if err != nil {
			return fmt.Errorf("%w: the symlink %s points to nothing readable: %v", ErrNotSubmission, s.Entry, err)
		}
		src = resolved
	}
	lower := strings.ToLower(s.Entry)
	switch {
	case fi.IsDir():
		return copyDir(src, dest, lim, s)
	case strings.HasSuffix(lower, ".zip"):
		return unzip(src, dest, lim, s)
	case strings.HasSuffix(lower, ".tar.gz") || strings.HasSuffix(lower, ".tgz"):
		return untar(src, dest, lim, s)
	default:
		return fmt.Errorf("%w: %s", ErrNotSubmission, s.Entry)
	}
}

// safeRel checks an archive member's name and returns it cleaned, relative.
func safeRel(name string) (string, error) {
	n := strings.ReplaceAll(name, `\`, "/")
	if !utf8.ValidString(n) || strings.HasPrefix(n, "/") || (len(n) > 1 && n[1] == ':') {
		return "", fmt.Errorf("%w: %q is an absolute path", ErrUnsafePath, name)
	}
	clean := path.Clean(n)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("%w: %q points outside the submission", ErrUnsafePath, name)
	}
	return clean, nil
}

// linkInside reports whether a link at rel with the given target stays
// inside the submission.
func linkInside(rel, target string) bool {
	if strings.HasPrefix(target, "/") {
		return false
	}
	joined := path.Clean(path.Join(path.Dir(rel), target))
	return joined != ".." && !strings.HasPrefix(joined, "../")
}

type member struct {
	rel    string
	dir    bool
	link   string // the target of a symlink or hard link
	isLink bool
	open   func() (io.ReadCloser, error)
}

// extract checks every member, then writes the regular files, within the
// limits. Links are reported and left out; a link pointing outside, like a
// path leaving the submission, refuses it before anything is written.
func extract(members []member, dest string, lim Limits, s *Submission) error {
	if len(members) > lim.MaxFiles {
		return fmt.Errorf("%w: %d entries, more than %d", ErrTooBig, len(members), lim.MaxFiles)
	}
	for i, m := range members {
		rel, err := safeRel(m.rel)
		if err != nil {
			return err
		}
		members[i].rel = rel
		if m.isLink && !linkInside(rel, m.link) {
			return fmt.Errorf("%w: the link %q points outside the submission (to %q)", ErrUnsafePath, m.rel, m.link)
		}
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	var total int64
	for _, m := range members {
		target := filepath.Join(dest, filepath.FromSlash(m.rel))
		switch {
		case m.isLink:
			s.Notes = append(s.Notes, fmt.Sprintf("left out the link %s -> %s (links are not followed)", m.rel, m.link))
		case m.dir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		default:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			r, err := m.open()
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrBadArchive, m.rel, err)
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				r.Close()
				return fmt.Errorf("%w: %s: %v", ErrBadArchive, m.rel, err)
			}
			n, err := io.Copy(f, io.LimitReader(r, lim.MaxBytes-total+1))
			r.Close()
			f.Close()
			total += n
			if total > lim.MaxBytes {
				return fmt.Errorf("%w of %d MiB (a zip bomb?)", ErrTooBig, lim.MaxBytes>>20)
			}
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrBadArchive, m.rel, err)
			}
		}
	}
	return nil
}

func unzip(src, dest string, lim Limits, s *Submission) error {
	zr, err := zip.OpenReader(src)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadArchive, err)
	}
	defer zr.Close()
	var members []member
	for _, f := range zr.File {
		m := member{rel: f.Name, dir: f.FileInfo().IsDir()}
		if f.Mode()&fs.ModeSymlink != 0 {
			rc, err := f.Open()
			if err != nil {
				return fmt.Errorf("%w: %v", ErrBadArchive, err)
			}
			target, _ := io.ReadAll(io.LimitReader(rc, 4096))
			rc.Close()
			m.isLink, m.link = true, string(target)
		}
		m.open = f.Open
		members = append(members, m)
	}
	return extract(members, dest, lim, s)
}

func untar(src, dest string, lim Limits, s *Submission) error {
	// First pass: names and links only, so that nothing is written from an
	// archive that would be refused.
	var members []member
	err := walkTar(src, lim, func(h *tar.Header, _ io.Reader) error {
		m := member{rel: h.Name}
		switch h.Typeflag {
		case tar.TypeDir:
			m.dir = true
		case tar.TypeSymlink, tar.TypeLink:
			m.isLink, m.link = true, h.Linkname
			if h.Typeflag == tar.TypeLink {
				// A hard link's target is relative to the archive root.
				m.link = strings.Repeat("../", strings.Count(path.Clean(h.Name), "/")) + h.Linkname
			}
		case tar.TypeReg:
		default:
			return nil // devices, fifos: nothing to grade
		}
		members = append(members, m)
		return nil
	})
	if err != nil {
		return err
	}
	// Second pass: the files' contents, in the same order.
	contents := map[string][]byte{}
	var total int64
	err = walkTar(src, lim, func(h *tar.Header, r io.Reader) error {
		if h.Typeflag != tar.TypeReg {
			return nil
		}
		data, err := io.ReadAll(io.LimitReader(r, lim.MaxBytes-total+1))
		total += int64(len(data))
		if total > lim.MaxBytes {
			return fmt.Errorf("%w of %d MiB (a zip bomb?)", ErrTooBig, lim.MaxBytes>>20)
		}
		contents[h.Name] = data
		return err
	})
	if err != nil {
		return err
	}
	for i := range members {
		name := members[i].rel
		members[i].open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(contents[name])), nil }
	}
	return extract(members, dest, lim, s)
}

func walkTar(src string, lim Limits, f func(*tar.Header, io.Reader) error) error {
	file, err := os.Open(src)
	if err != nil {
		return err
	}
	defer file.Close()
	gz, err := gzip.NewReader(file)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadArchive, err)
	}
	tr := tar.NewReader(gz)
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadArchive, err)
		}
		if n++; n > lim.MaxFiles {
			return fmt.Errorf("%w: more than %d entries", ErrTooBig, lim.MaxFiles)
		}
		if err := f(h, tr); err != nil {
			return err
		}
	}
}

// copyDir copies a submission folder's regular files; symlinks inside are
// reported and left out.
func copyDir(src, dest string, lim Limits, s *Submission) error {
	var members []member
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		m := member{rel: filepath.ToSlash(rel), dir: d.IsDir()}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m.isLink, m.link = true, target
			if !linkInside(m.rel, target) {
				// On disk the link is harmless to us (it is not
				// followed); it is reported, not a reason to refuse.
				s.Notes = append(s.Notes, fmt.Sprintf("left out the link %s -> %s, which points outside the submission", m.rel, target))
				return nil
			}
		case !d.IsDir() && !d.Type().IsRegular():
			return nil
		}
		m.open = func() (io.ReadCloser, error) { return os.Open(p) }
		members = append(members, m)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read submission folder: %w", err)
	}
	return extract(members, dest, lim, s)
}

// findLabs fills s.Labs: for each lab, labs/NN-name/ or NN-name/ when it
// holds .go files, otherwise the directory whose non-test .go files declare
// the lab's package (the shallowest first).
func findLabs(dest string, labs []Lab, s *Submission) error {
	byPkg := map[string][]string{} // package -> directories, sorted, root first
	pkgOf := map[string]string{}   // directory -> the package its files declare
	tests := 0
	_ = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		if strings.HasSuffix(p, "_test.go") {
			tests++
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly)
		if err != nil {
			return nil
		}
		dir := filepath.Dir(p)
		pkg := f.Name.Name
		pkgOf[dir] = pkg
		if l := byPkg[pkg]; len(l) == 0 || l[len(l)-1] != dir {
			byPkg[pkg] = append(byPkg[pkg], dir)
		}
		return nil
	})
	labOfPkg := map[string]Lab{}
	for _, l := range labs {
		labOfPkg[l.Package] = l
	}
	wrong := map[string]bool{} // folders that hold another lab's files
	for _, lab := range labs {
		var chosen string
		for _, d := range []string{filepath.Join(dest, "labs", lab.Dir), filepath.Join(dest, lab.Dir)} {
			if !hasGo(d) {
				continue
			}
			if other, ok := labOfPkg[pkgOf[d]]; ok && other.Number != lab.Number {
				rel, _ := filepath.Rel(dest, d)
				s.Notes = append(s.Notes, fmt.Sprintf("wrong lab: %s/ holds lab %02d's files (package %s), not lab %02d's (package %s); they count for lab %02d", filepath.ToSlash(rel), other.Number, other.Package, lab.Number, lab.Package, other.Number))
				wrong[d] = true
				continue
			}
			chosen = d
			break
		}
		if chosen == "" {
			dirs := byPkg[lab.Package]
			sort.Slice(dirs, func(i, j int) bool {
				di, dj := strings.Count(dirs[i], string(filepath.Separator)), strings.Count(dirs[j], string(filepath.Separator))
				if di != dj {
					return di < dj
				}
				return dirs[i] < dirs[j]
			})
			for _, d := range dirs {
				if !wrong[d] || labOfPkg[pkgOf[d]].Number == lab.Number {
					chosen = d
					break
				}
			}
		}
		if chosen != "" {
			s.Labs[lab.Number] = chosen
		}
	}
	if tests > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d test file(s) ignored: the kit's own tests always run", tests))
	}
	if len(s.Labs) == 0 {
		return fmt.Errorf("%w (looked for labs/NN-name/, NN-name/ and .go files declaring a lab's package)", ErrNoLabs)
	}
	return nil
}

func hasGo(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			return true
		}
	}
	return false
}

// classEntry is one entry of the class folder.
type classEntry struct {
	name string
	info fs.FileInfo
}

func minEntry(group []classEntry) string {
	m := group[0].name
	for _, e := range group[1:] {
		m = min(m, e.name)
	}
	return m
}
