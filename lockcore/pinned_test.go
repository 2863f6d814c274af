package lockcore

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every rueidis command lockcore builds is pinned (see script.evalsha): a command rueidis
// recycles when its call returns may still be read by a failed connection's writer while a new
// call builds another in the same memory. A builder chain's Build() must be followed by Pin(),
// or return into a function that pins it (waitFor pins what it returns).
func TestCommandsPinned(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	pinsLater := map[string]bool{"waitFor": true}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			pinned := map[*ast.CallExpr]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Pin" {
						if inner, ok := sel.X.(*ast.CallExpr); ok {
							pinned[inner] = true
						}
					}
				}
				return true
			})
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Build" || !builtFromB(sel.X) {
					return true
				}
				checked++
				if !pinned[call] && !pinsLater[fn.Name.Name] {
					t.Errorf("%s: %s builds a command without Pin()", fset.Position(call.Pos()), fn.Name.Name)
				}
				return true
			})
		}
	}
	if checked < 10 {
		t.Fatalf("found %d command builds: the check no longer sees lockcore's builder chains", checked)
	}
}

// builtFromB reports whether x is a builder chain that starts with a B() call.
func builtFromB(x ast.Expr) bool {
	for {
		call, ok := x.(*ast.CallExpr)
		if !ok {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if sel.Sel.Name == "B" {
			return true
		}
		x = sel.X
	}
}
