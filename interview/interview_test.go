package interview

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryScenarioHasTheCoursesAnswer: each drill shows the one model
// answer docs/interview.md gives, so every scenario's section must be
// there with a prompt, a strong and a weak answer.
func TestEveryScenarioHasTheCoursesAnswer(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "docs", "interview.md"))
	if err != nil {
		t.Fatal(err)
	}
	answers := ParseAnswers(string(src))
	for _, s := range Scenarios {
		a, err := AnswerFor(answers, s)
		if err != nil {
			t.Errorf("AnswerFor(%s) = %v", s.ID, err)
			continue
		}
		if a.WhyWeak == "" || len(s.Points) < 3 {
			t.Errorf("scenario %s: why-weak %q, %d points; want both", s.ID, a.WhyWeak, len(s.Points))
		}
	}
}

func TestParseAnswers(t *testing.T) {
	md := "# T\n\n## Q one\n\n*Prompt:* \"Why?\"\n\n*Lab:* x\n\n**Strong answer.** \"Because A.\n\nAnd B.\"\n\n**Weak answer.** \"No.\"\n\n*Why it is weak:* it says nothing.\n\n| table | after |\n\n## Q two\n\nno prompt here\n"
	got := ParseAnswers(md)
	a, ok := got["Q one"]
	if !ok || len(got) != 1 {
		t.Fatalf("ParseAnswers = %v, want one section", got)
	}
	if a.Prompt != `"Why?"` || a.Strong != "\"Because A.\n\nAnd B.\"" || a.Weak != `"No."` || a.WhyWeak != "it says nothing." {
		t.Errorf("ParseAnswers(Q one) = %+v", a)
	}
}

func TestNumericDrills(t *testing.T) {
	for _, kind := range Kinds {
		a, err := NewNumeric(kind, 42)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewNumeric(kind, 42)
		if a.Prompt != b.Prompt || a.Answer != b.Answer {
			t.Errorf("NewNumeric(%s, 42) differs between calls", kind)
		}
		if len(a.Steps) < 2 {
			t.Errorf("NewNumeric(%s): %d steps, want a worked solution", kind, len(a.Steps))
		}
		if ok, err := a.Check(a.AnswerText()); !ok || err != nil {
			t.Errorf("%s: Check(%q) = %v, %v, want the answer accepted", kind, a.AnswerText(), ok, err)
		}
	}
}

// TestNumericCheckUnits: an answer with a unit of time is converted to the
// drill's unit ("6.4s" is 6400 ms), a bare number is read in the drill's
// unit, and the message for what is no number quotes it without its line
// end.
func TestNumericCheckUnits(t *testing.T) {
	ms := Numeric{Answer: 6400, Unit: "ms"}
	secs := Numeric{Answer: 800, Unit: "seconds"}
	jobs := Numeric{Answer: 27000, Unit: "jobs"}
	tests := []struct {
		n     Numeric
		typed string
		ok    bool
	}{
		{ms, "6.4s\n", true}, {ms, "6400\n", true}, {ms, "6400 ms", true}, {ms, "6,400 milliseconds", true}, {ms, "6.4", false}, {ms, "64s", false},
		{secs, "13m20s\n", true}, {secs, "13 min 20 s", true}, {secs, "800 seconds", true}, {secs, "800", true}, {secs, "13m", false},
		{jobs, "27,000 jobs", true}, {jobs, "27000", true}, {jobs, "2700", false},
	}
	for _, tt := range tests {
		if ok, err := tt.n.Check(tt.typed); ok != tt.ok || err != nil {
			t.Errorf("Check(%q) on an answer of %v %s = %v, %v, want %v, nil", tt.typed, tt.n.Answer, tt.n.Unit, ok, err, tt.ok)
		}
	}
	if _, err := secs.Check("ten minutes\n"); err == nil || err.Error() != `"ten minutes" is not a number` {
		t.Errorf(`Check("ten minutes\n") = %v, want the error "\"ten minutes\" is not a number"`, err)
	}
}

func TestNumericCheckTolerance(t *testing.T) {
	n := Numeric{Answer: 600, Unit: "seconds"}
	tests := []struct {
		typed string
		ok    bool
	}{
		{"600", true}, {"600 s", true}, {"603", true}, {"610", false}, {"120", false}, {"never", false},
	}
	for _, tt := range tests {
		if ok, _ := n.Check(tt.typed); ok != tt.ok {
			t.Errorf("Check(%q) = %v, want %v", tt.typed, ok, tt.ok)
		}
	}
	if _, err := n.Check("ten minutes"); err == nil {
		t.Errorf("Check(ten minutes) = nil error, want not a number")
	}
	never := Numeric{Answer: math.Inf(1)}
	if ok, _ := never.Check("never"); !ok {
		t.Errorf("Check(never) on a backlog that never drains = false")
	}
}

func TestRecoveryTimeExplainsTheDrain(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		n, _ := NewNumeric("recovery-time", seed)
		if !math.IsInf(n.Answer, 1) && !strings.Contains(strings.Join(n.Steps, "\n"), "that ignores the work that keeps arriving") {
			t.Errorf("seed %d: steps do not warn against backlog / capacity", seed)
		}
	}
}
