package changelog

import (
	"os"
	"strings"
	"testing"
)

func TestLevelsAreTheirPositions(t *testing.T) {
	for i, e := range Entries {
		if e.Level != i+1 {
			t.Errorf("Entries[%d].Level = %d, want %d (append only)", i, e.Level, i+1)
		}
	}
}

func TestBetween(t *testing.T) {
	// Fixed levels: later entries must not change what this test means.
	got := Between(2, 3, 10)
	if len(got) != 1 || got[0].Level != 3 {
		t.Errorf("Between(2, 3, 10) = %v, want the lab 10 split", got)
	}
	if got := Between(2, 3, 1); len(got) != 0 {
		t.Errorf("Between(2, 3, 1) = %v, want none", got)
	}
	if got := Between(3, 7, 10); len(got) != 1 || got[0].Level != 7 {
		t.Errorf("Between(3, 7, 10) = %v, want level 7 only (levels 4 to 6 are other labs')", got)
	}
	if got := Between(0, 2, 1); len(got) != 2 {
		t.Errorf("Between(0, 2, 1) = %v, want the two entries for every lab", got)
	}
}

// TestDocsListEveryEntry keeps docs/changelog.md in step with Entries.
func TestDocsListEveryEntry(t *testing.T) {
	data, err := os.ReadFile("../docs/changelog.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Entries {
		if !strings.Contains(string(data), e.String()) {
			t.Errorf("docs/changelog.md lacks the line %q", e.String())
		}
	}
}
