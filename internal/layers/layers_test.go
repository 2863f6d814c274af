package layers

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// edges is p's edges as "from:line name -> to".
func edges(p *Package) []string {
	var s []string
	for _, e := range p.Edges {
		s = append(s, e.String())
	}
	return s
}

func TestLoadEdges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dir   string
		files []string
		lines int
		edges []string
	}{
		// The test file's and the excluded file's uses are not edges; the parameter Top
		// shadows the function; bottom.size through slices.Clone is found.
		{"acyclic", []string{"bottom.go", "mid.go", "top.go"}, 6 + 8 + 11,
			[]string{"mid.go:4 bottom -> bottom.go", "top.go:11 bottom.size -> bottom.go", "top.go:11 mid -> mid.go"}},
		// The method's receiver is a use of kind.go; the call of the method a use of recv.go.
		{"two", []string{"kind.go", "recv.go"}, 6 + 4,
			[]string{"kind.go:6 kind.walk -> recv.go", "recv.go:4 kind -> kind.go"}},
		{"three", []string{"a.go", "b.go", "c.go"}, 6 + 6 + 5,
			[]string{"a.go:6 b -> b.go", "b.go:4 config -> c.go", "c.go:5 limit -> a.go"}},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			t.Parallel()
			p, err := Load("testdata/" + tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Files, tc.files) || p.Lines != tc.lines {
				t.Errorf("files %v, %d lines; want %v, %d", p.Files, p.Lines, tc.files, tc.lines)
			}
			if got := edges(p); !slices.Equal(got, tc.edges) {
				t.Errorf("edges:\n%q\nwant\n%q", got, tc.edges)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dir    string
		cycles []string // each cycle's Files and String
	}{
		{"acyclic", nil},
		{"two", []string{"[kind.go recv.go]: kind.go:6 kind.walk -> recv.go, recv.go:4 kind -> kind.go"}},
		{"three", []string{"[a.go b.go c.go]: a.go:6 b -> b.go, b.go:4 config -> c.go, c.go:5 limit -> a.go"}},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			t.Parallel()
			cycles, err := Check("testdata/" + tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cycles {
				got = append(got, fmt.Sprintf("%v: %s", c.Files, c))
				if len(c.Edges) != len(c.Path) {
					t.Errorf("%v: edges %v; want the path's %d (the component is one loop)", c.Files, c.Edges, len(c.Path))
				}
			}
			if !slices.Equal(got, tc.cycles) {
				t.Errorf("cycles:\n%q\nwant\n%q", got, tc.cycles)
			}
		})
	}
}

// Two loops through one file make one component; its path is a shortest loop through its
// first file, and Edges has every use inside it.
func TestCyclesComponent(t *testing.T) {
	t.Parallel()
	ref := func(from, to string) Ref { return Ref{From: from, To: to, Name: to[:1]} }
	p := &Package{
		Files: []string{"a.go", "b.go", "c.go", "d.go", "e.go"},
		Edges: []Ref{ref("a.go", "b.go"), ref("b.go", "c.go"), ref("b.go", "e.go"), ref("c.go", "a.go"),
			ref("c.go", "d.go"), ref("d.go", "b.go"), ref("d.go", "e.go")},
	}
	cycles := p.Cycles()
	if len(cycles) != 1 {
		t.Fatalf("cycles %v; want one component", cycles)
	}
	c := cycles[0]
	if !slices.Equal(c.Files, []string{"a.go", "b.go", "c.go", "d.go"}) || len(c.Edges) != 5 {
		t.Errorf("component %v with %d edges; want a.go to d.go (e.go is below them) with 5", c.Files, len(c.Edges))
	}
	if want := "a.go:0 b -> b.go, b.go:0 c -> c.go, c.go:0 a -> a.go"; c.String() != want {
		t.Errorf("path %s; want %s", c, want)
	}
}

func TestNoGoFiles(t *testing.T) {
	t.Parallel()
	if _, err := Check("testdata/empty"); !errors.Is(err, ErrNoGo) {
		t.Errorf("err %v; want ErrNoGo", err)
	}
	if _, err := Check("testdata/missing"); err == nil || errors.Is(err, ErrNoGo) {
		t.Errorf("err %v; want the directory's error", err)
	}
}
