package check

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fourth-outcome/labkit/course"
	"github.com/fourth-outcome/labkit/feedback"
	"github.com/fourth-outcome/labkit/grader"
	"github.com/fourth-outcome/labkit/internal/progress"
	"github.com/fourth-outcome/labkit/internal/usage"
	"github.com/fourth-outcome/labkit/render"
	"github.com/fourth-outcome/labkit/site"
)

// passOnRecordNote says, after a failing check of lab, that an earlier pass
// under other rules stays on record, and which rule changes lie between;
// "" when there is nothing to say.
func passOnRecordNote(s progress.LabState, lab int) string {
	pass, changes := progress.PassedUnderEarlierRules(s, lab)
	if pass == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nYou passed this lab on %s (%d/%d, rules level %d); that pass stays on record. The rules of this lab changed since:\n",
		pass.CheckedAt.Local().Format("2006-01-02"), pass.Score, pass.Total, pass.Rules)
	for _, c := range changes {
		fmt.Fprintf(&b, "  - %s\n", c)
	}
	b.WriteString("See docs/changelog.md.\n")
	return b.String()
}

// missingTestFile says, when the lab's test file is gone from labs/, that
// check grades with the kit's own copy anyway (the grader lays the
// pristine shim over the lab's directory) but an editor's "run test" finds
// no test; "" when the file is there. The command it suggests names the
// file from wd, when known.
func missingTestFile(wd, root string, lab grader.Lab) string {
	path := filepath.Join(root, "labs", lab.Dir, lab.TestFile)
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	from := path
	if wd != "" {
		if r, err := filepath.Rel(wd, path); err == nil {
			from = filepath.ToSlash(r)
		}
	}
	return fmt.Sprintf("labs/%s/%s is missing: check grades with the kit's own copy of it, so this result stands, but your editor's \"run test\" finds no test until you restore it (git checkout -- %s).", lab.Dir, lab.TestFile, from)
}

// nextAfterPass is the next step after lab passes: the next lab not yet
// passed, or the end of the course.
func nextAfterPass(st *progress.State, lab grader.Lab, prog string) string {
	for _, l := range course.Built() {
		if l.Number != lab.Number && !st.Labs[l.Dir].Passed {
			return fmt.Sprintf("lab %02d, %s: read labs/%s/README.md, then run `%s check %d`.", l.Number, l.Title, l.Dir, prog, l.Number)
		}
	}
	return "every lab of the course passes: the course is done. `" + prog + " interview` drills you on explaining it."
}

// usesRedis reports whether the registry marks lab as talking to Redis.
func usesRedis(lab grader.Lab) bool {
	l, err := course.Find(lab.Dir)
	return err == nil && l.Redis
}

// hintCount is how many hint files the lab has (0 if it has none).
func hintCount(root string, lab grader.Lab) int {
	files, _ := filepath.Glob(filepath.Join(root, "labs", lab.Dir, "hints", "*.md"))
	return len(files)
}

// WriteHTML writes the feedback of res as a page to file, with its links
// pointing into the docs site of the kit at root, which it renders (into
// .labkit/docs) when the site is missing or older than the course. A file
// that cannot be written is a usage error.
func WriteHTML(root, file string, res Result) error {
	siteDir := filepath.Join(root, ".labkit", "docs")
	if _, err := site.Build(site.Config{Root: root, Out: siteDir}); err != nil {
		return err
	}
	mdo := res.Markdown
	mdo.SiteBase = relDir(file, siteDir)
	mdo.TimelineFigures = true
	page, err := render.Page(fmt.Sprintf("Lab %02d feedback", res.Lab.Number), feedback.Markdown(res.Report, res.Lab, mdo))
	if err != nil {
		return err
	}
	timelines := map[string][]string{}
	for _, c := range res.Report.Cases {
		timelines[c.Name] = c.Timeline
	}
	page = render.InlineTimelines(page, timelines)
	if err := os.WriteFile(file, page, 0o644); err != nil {
		return usage.Errorf("--html: %v", err)
	}
	return nil
}

// relDir is the path from the directory of file to dir, with a trailing
// slash, for links in a page written to file.
func relDir(file, dir string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return dir + "/"
	}
	rel, err := filepath.Rel(filepath.Dir(abs), dir)
	if err != nil {
		return filepath.ToSlash(dir) + "/"
	}
	return filepath.ToSlash(rel) + "/"
}
