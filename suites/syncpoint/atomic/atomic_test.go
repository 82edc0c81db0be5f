package atomic_test

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	stdatomic "sync/atomic"
	"testing"

	"github.com/fourth-outcome/labkit/suites/syncpoint"
	"github.com/fourth-outcome/labkit/suites/syncpoint/atomic"
)

// budget is a token counter on the scheduled atomics: Withdraw is a
// check-then-act (a Load, then an Add) when split is set, and a
// compare-and-swap loop otherwise.
type budget struct {
	n     atomic.Int64
	split bool
}

func (b *budget) withdraw() bool {
	if b.split {
		if b.n.Load() > 0 {
			b.n.Add(-1)
			return true
		}
		return false
	}
	for {
		n := b.n.Load()
		if n <= 0 {
			return false
		}
		if b.n.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// race has 8 participants withdraw once each from a budget of 4 under the
// schedule of seed, and returns the tokens granted and left.
func race(seed int64, split bool) (granted, left int64, res syncpoint.Result) {
	b := &budget{split: split}
	b.n.Store(4)
	var n stdatomic.Int64
	var names []string
	var fs []func()
	for i := range 8 {
		names = append(names, fmt.Sprintf("worker %d", i))
		fs = append(fs, func() {
			if b.withdraw() {
				n.Add(1)
			}
		})
	}
	res = syncpoint.Race(seed, names, fs...)
	return n.Load(), b.n.Load(), res
}

func TestRaceExposesALoadThenAddAndNeverACompareAndSwapLoop(t *testing.T) {
	const seeds = 20
	caught := 0
	for seed := int64(1); seed <= seeds; seed++ {
		granted, left, res := race(seed, true)
		if !res.Controlled || res.Switches == 0 {
			t.Fatalf("Race(seed %d) on atomics alone = controlled %v, %d switches; want a controlled race that switched", seed, res.Controlled, res.Switches)
		}
		if granted != 4 || left != 0 {
			caught++
		}
		again, againLeft, _ := race(seed, true)
		if again != granted || againLeft != left {
			t.Errorf("Race(seed %d) granted %d (left %d), then %d (left %d): the same seed must give the same schedule", seed, granted, left, again, againLeft)
		}
		if granted, left, res := race(seed, false); granted != 4 || left != 0 || !res.Controlled {
			t.Errorf("Race(seed %d) on a compare-and-swap loop granted %d, left %d (controlled %v), want 4, 0", seed, granted, left, res.Controlled)
		}
	}
	if caught < seeds/2 {
		t.Errorf("a Load-then-Add withdraw overdrew the budget in %d of %d seeds, want most", caught, seeds)
	}
}

func TestOutsideARaceTheOperationsAreTheStandardOnes(t *testing.T) {
	var (
		b   atomic.Bool
		i32 atomic.Int32
		i64 atomic.Int64
		u32 atomic.Uint32
		u64 atomic.Uint64
		up  atomic.Uintptr
		p   atomic.Pointer[int]
		v   atomic.Value
	)
	done := make(chan bool)
	for range 4 {
		go func() {
			for range 1000 {
				i64.Add(1)
				for {
					n := i32.Load()
					if i32.CompareAndSwap(n, n+1) {
						break
					}
				}
				u32.Add(1)
				u64.Add(2)
				up.Add(1)
			}
			done <- true
		}()
	}
	for range 4 {
		<-done
	}
	if i64.Load() != 4000 || i32.Load() != 4000 || u32.Load() != 4000 || u64.Load() != 8000 || up.Load() != 4000 {
		t.Errorf("after 4×1000 increments: %d %d %d %d %d, want 4000 4000 4000 8000 4000", i64.Load(), i32.Load(), u32.Load(), u64.Load(), up.Load())
	}
	if !syncpoint.Used() {
		t.Error("Used() = false after atomic operations, want true")
	}
	if b.Load() || b.Swap(true) || !b.CompareAndSwap(true, false) || b.Load() {
		t.Error("Bool: zero value, Swap or CompareAndSwap wrong")
	}
	if old := i64.Swap(1); old != 4000 || i64.And(3) != 1 || i64.Or(4) != 1 || i64.Load() != 5 {
		t.Error("Int64: Swap, And or Or wrong")
	}
	one, two := 1, 2
	if p.Load() != nil || p.Swap(&one) != nil || !p.CompareAndSwap(&one, &two) || p.Load() != &two {
		t.Error("Pointer: zero value, Swap or CompareAndSwap wrong")
	}
	if v.Load() != nil || v.Swap("a") != nil || !v.CompareAndSwap("a", "b") || v.Load() != "b" {
		t.Error("Value: zero value, Swap or CompareAndSwap wrong")
	}
	var x int64
	if atomic.AddInt64(&x, 5) != 5 || atomic.SwapInt64(&x, 7) != 5 || !atomic.CompareAndSwapInt64(&x, 7, 9) || atomic.LoadInt64(&x) != 9 || atomic.OrInt64(&x, 6) != 9 || atomic.AndInt64(&x, 1) != 15 || x != 1 {
		t.Errorf("the Int64 functions: x = %d, want 1", x)
	}
}

// TestOffersEverythingAtomicDoes checks that every exported name of package
// sync/atomic, and every exported method of its types, is declared here: the
// grader compiles a student's files with this package in place of
// "sync/atomic", so a name missing here would fail the graded copy.
func TestOffersEverythingAtomicDoes(t *testing.T) {
	std := exportedNames(t, filepath.Join(build.Default.GOROOT, "src", "sync", "atomic"))
	own := exportedNames(t, ".")
	for name := range std {
		if !own[name] {
			t.Errorf("package sync/atomic has %s, and syncpoint/atomic does not: a file that uses it does not compile under labctl check", name)
		}
	}
	if len(std) < 80 {
		t.Errorf("found %d exported names in sync/atomic, want at least 80: the parse is wrong", len(std))
	}
}

// exportedNames parses the package in dir (its non-test files for this
// platform) and returns its exported top-level names, methods as
// "Type.Method".
func exportedNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	pkg, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("ImportDir(%s) = %v", dir, err)
	}
	names := map[string]bool{}
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
				switch r := recv.(type) {
				case *ast.IndexExpr:
					recv = r.X
				case *ast.IndexListExpr:
					recv = r.X
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
	for name := range names {
		if strings.HasPrefix(name, "_") {
			delete(names, name)
		}
	}
	return names
}
