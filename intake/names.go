package intake

import (
	"regexp"
	"strings"
	"time"
)

// The export names of the common LMSs, each with the student's name, ID
// and, for Blackboard, the submission's time.
var (
	// Moodle: "Ada Lovelace_12345_assignsubmission_file_" (a folder per
	// student), or a file with its own name after the last underscore.
	moodleName = regexp.MustCompile(`^(.+?)_(\d+)_assignsubmission_[a-z]+_`)
	// Canvas: "lovelaceada_12345_67890_claim.zip" (the user's ID, then
	// the submission's), or "lovelaceada_LATE_12345_...".
	canvasName = regexp.MustCompile(`^([A-Za-z0-9-]+?)(?:_LATE|_late)?_(\d+)_(\d+)(?:_(.*))?$`)
	// Blackboard: "Lab 1_alovelace_attempt_2026-03-01-23-59-00_claim.zip".
	blackboardName = regexp.MustCompile(`^(?:.*)_([^_]+)_attempt_(\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d)(?:_.*)?$`)
	// Gradescope's export: a folder "submission_123456789" per student.
	gradescopeName = regexp.MustCompile(`^submission_(\d+)$`)
)

// ParseName returns who an entry of the class folder is from: for the
// export names of Moodle, Canvas, Blackboard and Gradescope, the student's
// name (a login for Canvas and Blackboard, the submission's folder for
// Gradescope, whose submission_metadata.yml maps it to a student) and ID,
// and the time the name carries (Blackboard's, in UTC); otherwise the name
// without its extension, no ID and no time.
func ParseName(entry string) (student, id string, submitted time.Time) {
	base := trimExt(entry)
	if m := moodleName.FindStringSubmatch(entry); m != nil {
		return m[1], m[2], time.Time{}
	}
	if m := blackboardName.FindStringSubmatch(base); m != nil {
		t, _ := time.Parse("2006-01-02-15-04-05", m[2])
		return m[1], m[1], t
	}
	if m := gradescopeName.FindStringSubmatch(base); m != nil {
		return base, m[1], time.Time{}
	}
	if m := canvasName.FindStringSubmatch(base); m != nil {
		return m[1], m[2], time.Time{}
	}
	return base, "", time.Time{}
}

func trimExt(entry string) string {
	for _, ext := range []string{".tar.gz", ".tgz", ".zip"} {
		if strings.HasSuffix(strings.ToLower(entry), ext) {
			return entry[:len(entry)-len(ext)]
		}
	}
	return entry
}
