package layers

import (
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Ref is one edge of the file graph with an example: the first identifier (in source order)
// in From that refers to a name declared in To.
type Ref struct {
	From, To string // file names, relative to the package directory
	Pos      token.Position
	Name     string // the name used, as written: "f", or "T.m" for a method or field of T
}

// String is "from.go:12 name -> to.go".
func (r Ref) String() string {
	return fmt.Sprintf("%s:%d %s -> %s", r.From, r.Pos.Line, r.Name, r.To)
}

// Package is the file graph of one package directory. It is a plain value.
type Package struct {
	Dir string
	// Files are the non-test Go files the build of this platform includes, sorted; Lines their
	// lines in all.
	Files []string
	Lines int
	// Edges holds one Ref per pair of files with a use, sorted by From and To.
	Edges []Ref
}

// ErrNoGo is returned for a directory without non-test Go files.
var ErrNoGo = errors.New("no Go files")

// Load parses the non-test Go files of the package in dir (those the build for this GOOS and
// GOARCH includes, as go build would pick them) and builds their file graph. It is safe for
// concurrent use.
func Load(dir string) (*Package, error) {
	bp, err := build.Default.ImportDir(dir, 0)
	var noGo *build.NoGoError
	if errors.As(err, &noGo) || (err == nil && len(bp.GoFiles)+len(bp.CgoFiles) == 0) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoGo)
	}
	if err != nil {
		return nil, err
	}
	names := slices.Concat(bp.GoFiles, bp.CgoFiles)
	slices.Sort(names)
	p := &Package{Dir: dir, Files: names}
	fset := token.NewFileSet()
	files, lines, err := parseFiles(fset, dir, names)
	if err != nil {
		return nil, err
	}
	p.Lines = lines

	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{
		Importer: stdImporter{std: importer.Default()},
		// Errors are expected (the imports not loaded) and beside the point: the names that
		// resolve are what the graph needs.
		Error:       func(error) {},
		FakeImportC: true,
	}
	pkg, _ := conf.Check(bp.ImportPath, fset, files, info) // a package even with errors

	owners := fieldOwners(pkg)
	first := map[[2]string]Ref{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		if _, ok := obj.(*types.PkgName); ok {
			continue
		}
		from, to := fset.Position(id.Pos()), fset.Position(obj.Pos())
		if from.Filename == to.Filename {
			continue
		}
		key := [2]string{from.Filename, to.Filename}
		if r, ok := first[key]; ok && r.Pos.Offset < from.Offset {
			continue
		}
		first[key] = Ref{From: from.Filename, To: to.Filename, Pos: from, Name: qualified(obj, owners)}
	}
	for _, r := range first {
		p.Edges = append(p.Edges, r)
	}
	slices.SortFunc(p.Edges, func(a, b Ref) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return p, nil
}

// parseFiles parses the files called names in dir, each under its name alone (so positions
// read "a.go:3"), and counts their lines.
func parseFiles(fset *token.FileSet, dir string, names []string) ([]*ast.File, int, error) {
	files := make([]*ast.File, 0, len(names))
	lines := 0
	for _, name := range names {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, 0, err
		}
		lines += strings.Count(string(src), "\n")
		if len(src) > 0 && src[len(src)-1] != '\n' {
			lines++ // a last line without its newline
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, 0, err
		}
		files = append(files, f)
	}
	return files, lines, nil
}

// qualified names obj as a reader finds it: a method or field with its type, "T.m".
func qualified(obj types.Object, owners map[*types.Var]string) string {
	switch o := obj.(type) {
	case *types.Func:
		if recv := o.Signature().Recv(); recv != nil {
			if n := named(recv.Type()); n != nil {
				return n.Obj().Name() + "." + o.Name()
			}
		}
	case *types.Var:
		if t, ok := owners[o.Origin()]; ok {
			return t + "." + o.Name()
		}
	}
	return obj.Name()
}

// fieldOwners maps the fields of pkg's top-level struct types to the type's name (a field
// does not lead back to its struct).
func fieldOwners(pkg *types.Package) map[*types.Var]string {
	owners := map[*types.Var]string{}
	for _, name := range pkg.Scope().Names() {
		tn, ok := pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		if st, ok := tn.Type().Underlying().(*types.Struct); ok {
			for f := range st.Fields() {
				owners[f] = name
			}
		}
	}
	return owners
}

func named(t types.Type) *types.Named {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

// stdImporter loads the standard library, whose export data the go command has at hand, so
// that uses through its generic functions (slices.Clone of a local type) resolve; any other
// import fails, and go/types goes on with a stand-in package.
type stdImporter struct{ std types.Importer }

func (s stdImporter) Import(path string) (*types.Package, error) {
	if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
		return nil, fmt.Errorf("%s: not loaded", path)
	}
	return s.std.Import(path)
}
