package grader

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"strings"
)

// sources is the code under test, by file name, to check the lines a
// traceback names. The runtime places a goroutine inside an inlined empty
// loop (for {}) at line 1 of its file, which is no line of the function it
// names; such a frame is moved to the loop, or to where the function
// starts.
type sources struct {
	files map[string][]byte
	funcs map[string]map[string]funcSpan // file -> function -> its lines, parsed once
}

// funcSpan is a top-level function's lines and the lines of the empty,
// endless loops (for {}) in it.
type funcSpan struct {
	start, end int
	emptyLoops []int
}

func newSources(files map[string][]byte) *sources {
	return &sources{files: files, funcs: map[string]map[string]funcSpan{}}
}

// placed returns fs with each frame on a line of the function it names.
func (p *parser) placed(fs []Frame) []Frame {
	if p.sources == nil {
		return fs
	}
	for i := range fs {
		fs[i] = p.sources.place(fs[i])
	}
	return fs
}

// place returns f with its line moved into the function it names, when
// the traceback's line lies outside it: to the function's first empty
// endless loop, else to the line where the function starts. A frame whose
// file or function is unknown is returned as it is.
func (s *sources) place(f Frame) Frame {
	span, ok := s.span(f.File, f.Func)
	if !ok || (f.Line >= span.start && f.Line <= span.end) {
		return f
	}
	if len(span.emptyLoops) > 0 {
		f.Line = span.emptyLoops[0]
	} else {
		f.Line = span.start
	}
	return f
}

// span finds the top-level function a frame's name belongs to: "Store.Do"
// and "Store.Do.func1" are the method Do of Store, "New.func2" the
// function New.
func (s *sources) span(file, fn string) (funcSpan, bool) {
	funcs, ok := s.funcs[file]
	if !ok {
		funcs = parseFuncs(s.files[file])
		s.funcs[file] = funcs
	}
	parts := strings.Split(fn, ".")
	if len(parts) >= 2 {
		if sp, ok := funcs[parts[0]+"."+parts[1]]; ok {
			return sp, true
		}
	}
	sp, ok := funcs[parts[0]]
	return sp, ok
}

// parseFuncs returns the spans of the top-level functions of src, by
// "Func" or "Type.Method"; nil when src does not parse.
func parseFuncs(src []byte) map[string]funcSpan {
	if src == nil {
		return nil
	}
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, "", src, goparser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	out := map[string]funcSpan{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			name = recvType(fd.Recv.List[0].Type) + "." + name
		}
		sp := funcSpan{start: fset.Position(fd.Pos()).Line, end: fset.Position(fd.End()).Line}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if fs, ok := n.(*ast.ForStmt); ok && fs.Init == nil && fs.Cond == nil && fs.Post == nil && len(fs.Body.List) == 0 {
				sp.emptyLoops = append(sp.emptyLoops, fset.Position(fs.Pos()).Line)
			}
			return true
		})
		out[name] = sp
	}
	return out
}

// recvType is the name of a method's receiver type: Store for *Store,
// Store[K] and *Store[K, V].
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
