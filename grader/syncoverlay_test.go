package grader

import (
	"strings"
	"testing"
)

func TestInstrumentSync(t *testing.T) {
	tests := []struct {
		name, src, want string
		changed         bool
	}{
		{"grouped", "package claim\n\nimport (\n\t\"context\"\n\t\"sync\"\n)\n", "\tsync \"" + SyncPointPackage + "\"\n", true},
		{"single", "package claim\n\nimport \"sync\"\n", "import sync \"" + SyncPointPackage + "\"\n", true},
		{"aliased", "package claim\n\nimport gosync \"sync\"\n", "import gosync \"" + SyncPointPackage + "\"\n", true},
		{"atomic only", "package claim\n\nimport \"sync/atomic\"\n", "import \"sync/atomic\"\n", false},
		{"no imports", "package claim\n", "package claim\n", false},
		{"does not parse", "package claim\nimport (\n", "import (\n", false},
	}
	for _, tt := range tests {
		got, changed := instrumentSync([]byte(tt.src))
		if changed != tt.changed || !strings.Contains(string(got), tt.want) {
			t.Errorf("instrumentSync(%s) = %q, %v; want it to contain %q, %v", tt.name, got, changed, tt.want, tt.changed)
		}
		if strings.Count(string(got), "\n") != strings.Count(tt.src, "\n") {
			t.Errorf("instrumentSync(%s) changed the number of lines: %q", tt.name, got)
		}
	}
}
