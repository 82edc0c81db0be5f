package grader

import "github.com/fourth-outcome/labkit/rubric"

// Lab is what the grader needs to know of a lab: its rubric, where it lives
// and the pristine test shim overlaid on every run. The grader knows no lab
// by name; package course registers them.
type Lab struct {
	rubric.Lab
	Dir      string // directory under labs/ and solutions/, "01-claim"
	TestFile string // the shim's file name, "claim_test.go"
	Shim     string // the shim's pristine contents
	NextLab  int    // the number of the lab that follows, 0 for the last one
	// Fixtures is the directory, relative to the kit root, of the suite's
	// independent test programs: testdata/wrong/<name>/ must each be
	// caught, testdata/correct/<name>/ must each pass ("suites/claimsuite").
	Fixtures string
	// InstrumentSync grades the implementation with its "sync" import
	// pointed at SyncPointPackage, whose mutexes the suite can schedule.
	InstrumentSync bool
	// Imports is every package the lab's code may import, sorted: the
	// standard packages the course allows every lab and the kit or
	// third-party packages this lab needs. The grader refuses any other
	// import before it builds a submission ("unsafe" included).
	Imports []string
}
