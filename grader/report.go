// Package grader runs a lab's pristine suite over an implementation (a
// student's directory, the reference solution, or a catalogued mistake) and
// turns the test2json stream into a Report (package report), which
// package feedback renders as Markdown and package formats in every format.
package grader

import "github.com/fourth-outcome/labkit/report"

// The report's types, named here so that the grader's callers read as one
// package; package report defines them and computes every score.
type (
	Status       = report.Status
	Report       = report.Report
	CaseResult   = report.CaseResult
	BuildFailure = report.BuildFailure
	CompileError = report.CompileError
	Frame        = report.Frame
)

// The statuses a case can end in (see package report).
const (
	StatusPass         = report.StatusPass
	StatusFail         = report.StatusFail
	StatusPanic        = report.StatusPanic
	StatusRace         = report.StatusRace
	StatusTimeout      = report.StatusTimeout
	StatusCrash        = report.StatusCrash
	StatusNoFinish     = report.StatusNoFinish
	StatusNotRun       = report.StatusNotRun
	StatusSkip         = report.StatusSkip
	StatusInconclusive = report.StatusInconclusive
)

// Report's constants and words (see package report).
const (
	ReportVersion   = report.ReportVersion
	RaceOff         = report.RaceOff
	TamperedProblem = report.TamperedProblem
)

// NotImplementedWords is report.NotImplementedWords.
var NotImplementedWords = report.NotImplementedWords

// ShowsMisconception is report.ShowsMisconception.
func ShowsMisconception(s Status) bool { return report.ShowsMisconception(s) }
