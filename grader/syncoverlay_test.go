package grader

import (
	"strings"
	"testing"
)

func TestInstrumentSync(t *testing.T) {
	syncOnly := instrumented(Lab{InstrumentSync: true})
	both := instrumented(Lab{InstrumentSync: true, InstrumentAtomic: true})
	atomicOnly := instrumented(Lab{InstrumentAtomic: true})
	tests := []struct {
		name, src string
		subst     map[string]string
		want      []string
		changed   bool
	}{
		{"grouped", "package claim\n\nimport (\n\t\"context\"\n\t\"sync\"\n)\n", syncOnly, []string{"\tsync \"" + SyncPointPackage + "\"\n"}, true},
		{"single", "package claim\n\nimport \"sync\"\n", syncOnly, []string{"import sync \"" + SyncPointPackage + "\"\n"}, true},
		{"aliased", "package claim\n\nimport gosync \"sync\"\n", syncOnly, []string{"import gosync \"" + SyncPointPackage + "\"\n"}, true},
		{"atomic only", "package claim\n\nimport \"sync/atomic\"\n", syncOnly, []string{"import \"sync/atomic\"\n"}, false},
		{"atomic instrumented", "package claim\n\nimport \"sync/atomic\"\n", atomicOnly, []string{"import atomic \"" + SyncPointAtomicPackage + "\"\n"}, true},
		{"atomic aliased", "package claim\n\nimport at \"sync/atomic\"\n", both, []string{"import at \"" + SyncPointAtomicPackage + "\"\n"}, true},
		{"sync left when only atomic asked", "package claim\n\nimport (\n\t\"sync\"\n\t\"sync/atomic\"\n)\n", atomicOnly,
			[]string{"\t\"sync\"\n", "\tatomic \"" + SyncPointAtomicPackage + "\"\n"}, true},
		{"both", "package claim\n\nimport (\n\t\"sync/atomic\"\n\t\"context\"\n\t\"sync\"\n)\n\nvar x atomic.Int64\n", both,
			[]string{"\tatomic \"" + SyncPointAtomicPackage + "\"\n\t\"context\"\n\tsync \"" + SyncPointPackage + "\"\n)\n\nvar x atomic.Int64\n"}, true},
		{"two import decls", "package claim\n\nimport \"sync\"\nimport a \"sync/atomic\"\n", both,
			[]string{"import sync \"" + SyncPointPackage + "\"\nimport a \"" + SyncPointAtomicPackage + "\"\n"}, true},
		{"nothing asked", "package claim\n\nimport \"sync\"\n", nil, []string{"import \"sync\"\n"}, false},
		{"no imports", "package claim\n", both, []string{"package claim\n"}, false},
		{"does not parse", "package claim\nimport (\n", both, []string{"import (\n"}, false},
	}
	for _, tt := range tests {
		got, changed := instrumentSync([]byte(tt.src), tt.subst)
		if changed != tt.changed {
			t.Errorf("instrumentSync(%s) changed = %v, want %v", tt.name, changed, tt.changed)
		}
		for _, want := range tt.want {
			if !strings.Contains(string(got), want) {
				t.Errorf("instrumentSync(%s) = %q; want it to contain %q", tt.name, got, want)
			}
		}
		if strings.Count(string(got), "\n") != strings.Count(tt.src, "\n") {
			t.Errorf("instrumentSync(%s) changed the number of lines: %q", tt.name, got)
		}
	}
}
