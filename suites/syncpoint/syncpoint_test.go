package syncpoint

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// store is a claim store whose claim is split in two lock sections when
// split is set: the lookup-then-insert race.
type store struct {
	mu    Mutex
	m     map[string]bool
	split bool
}

func (s *store) claim(key string) bool {
	if s.split {
		s.mu.Lock()
		_, taken := s.m[key]
		s.mu.Unlock()
		if taken {
			return false
		}
		s.mu.Lock()
		s.m[key] = true
		s.mu.Unlock()
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[key] {
		return false
	}
	s.m[key] = true
	return true
}

func race(seed int64, split bool) (int64, Result) {
	s := &store{m: map[string]bool{}, split: split}
	var wins atomic.Int64
	var fs []func()
	var names []string
	for i := range 8 {
		names = append(names, fmt.Sprintf("worker %d", i))
		fs = append(fs, func() {
			if s.claim("k") {
				wins.Add(1)
			}
		})
	}
	res := Race(seed, names, fs...)
	return wins.Load(), res
}

func TestRaceExposesASplitClaimOnEverySeedAndNeverAnAtomicOne(t *testing.T) {
	caught := 0
	for seed := int64(1); seed <= 20; seed++ {
		n, res := race(seed, true)
		if !res.Controlled || res.Switches == 0 {
			t.Fatalf("Race(seed %d) = controlled %v, %d switches; want a controlled race that switched", seed, res.Controlled, res.Switches)
		}
		if n > 1 {
			caught++
		}
		again, _ := race(seed, true)
		if again != n {
			t.Errorf("Race(seed %d) gave %d winners, then %d: the same seed must give the same schedule", seed, n, again)
		}
		if n, res := race(seed, false); n != 1 || !res.Controlled {
			t.Errorf("Race(seed %d) on an atomic claim = %d winners (controlled %v), want exactly 1", seed, n, res.Controlled)
		}
	}
	if caught < 15 {
		t.Errorf("a split claim double-claimed in %d of 20 seeds, want nearly all", caught)
	}
}

func TestRaceLetsGoOfCodeThatBlocksOnAChannel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan struct{})
		var mu Mutex
		res := Race(1, []string{"sender", "receiver"},
			func() {
				mu.Lock()
				mu.Unlock()
				ch <- struct{}{}
			},
			func() {
				mu.Lock()
				mu.Unlock()
				<-ch
			})
		if res.Controlled {
			t.Errorf("Race with participants that meet on a channel: Controlled = true, want false (it cannot be scheduled)")
		}
	})
}

func TestOutsideARaceMutexIsAMutex(t *testing.T) {
	var mu Mutex
	var rw RWMutex
	n := 0
	done := make(chan bool)
	for range 4 {
		go func() {
			for range 1000 {
				mu.Lock()
				n++
				mu.Unlock()
				rw.RLock()
				rw.RUnlock()
			}
			done <- true
		}()
	}
	for range 4 {
		<-done
	}
	if n != 4000 || !Used() {
		t.Errorf("n = %d, Used() = %v; want 4000, true", n, Used())
	}
	if !mu.TryLock() || mu.TryLock() {
		t.Error("TryLock on a free mutex failed, or on a held one succeeded")
	}
	mu.Unlock()
	l := rw.RLocker()
	l.Lock()
	if rw.TryLock() {
		t.Error("RWMutex.TryLock succeeded while read-locked")
	}
	l.Unlock()
}

// TestOffersEverythingSyncDoes checks that every exported name of package
// sync, and every exported method of its types, is declared here: the
// grader compiles a student's files with this package in place of "sync",
// so a name missing here would fail the graded copy and never go test.
// A type declared here as an alias of sync's has its methods already.
func TestOffersEverythingSyncDoes(t *testing.T) {
	std, _ := exportedNames(t, filepath.Join(build.Default.GOROOT, "src", "sync"))
	own, aliases := exportedNames(t, ".")
	for name := range std {
		typ, _, isMethod := strings.Cut(name, ".")
		if own[name] || isMethod && aliases[typ] {
			continue
		}
		t.Errorf("package sync has %s, and syncpoint does not: a file that uses it does not compile under labctl check", name)
	}
}

// exportedNames parses the package in dir (its non-test files for this
// platform) and returns its exported top-level names, methods as
// "Type.Method", and the names it declares as type aliases.
func exportedNames(t *testing.T, dir string) (names, aliases map[string]bool) {
	t.Helper()
	pkg, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("ImportDir(%s) = %v", dir, err)
	}
	names, aliases = map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					names[d.Name.Name] = true
					continue
				}
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
					names[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names[s.Name.Name] = true
							aliases[s.Name.Name] = s.Assign.IsValid()
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return names, aliases
}

// TestRaceExposesACheckThenStoreOnAMap: a claim made by Load, then Store
// on a Map is interleaved (two winners on most seeds); one made by
// LoadOrStore never is.
func TestRaceExposesACheckThenStoreOnAMap(t *testing.T) {
	claim := func(seed int64, split bool) (int64, Result) {
		var m Map
		var wins atomic.Int64
		names := make([]string, 4)
		fs := make([]func(), 4)
		for i := range fs {
			names[i] = fmt.Sprintf("caller %d", i)
			fs[i] = func() {
				if split {
					if _, ok := m.Load("k"); !ok {
						m.Store("k", i)
						wins.Add(1)
					}
					return
				}
				if _, loaded := m.LoadOrStore("k", i); !loaded {
					wins.Add(1)
				}
			}
		}
		res := Race(seed, names, fs...)
		return wins.Load(), res
	}
	caught := 0
	for seed := int64(1); seed <= 20; seed++ {
		n, res := claim(seed, true)
		if !res.Controlled {
			t.Fatalf("Race(seed %d) over a Map: controlled = false, want true", seed)
		}
		if n > 1 {
			caught++
		}
		if n, _ := claim(seed, false); n != 1 {
			t.Errorf("Race(seed %d) on LoadOrStore = %d winners, want exactly 1", seed, n)
		}
	}
	if caught < 10 {
		t.Errorf("a Load-then-Store claim double-claimed in %d of 20 seeds, want most", caught)
	}
}
