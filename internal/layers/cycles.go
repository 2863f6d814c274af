package layers

import (
	"fmt"
	"slices"
	"strings"
)

// Cycle is a set of files that use each other, directly or through one another: a strongly
// connected component of the file graph with more than one file. It is a plain value.
type Cycle struct {
	// Files are the component's files, sorted.
	Files []string
	// Path is one shortest cycle through Files[0]: Path[i].To is Path[i+1].From, and the last
	// To is the first From. Breaking any of its edges breaks this cycle, not necessarily the
	// component.
	Path []Ref
	// Edges are all the uses between the component's files, one example each.
	Edges []Ref
}

// String is the cycle's path on one line, each edge with its example:
// "a.go:3 f -> b.go, b.go:9 T -> a.go".
func (c Cycle) String() string {
	parts := make([]string, len(c.Path))
	for i, r := range c.Path {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// Check loads the package in dir and returns its cycles; none when its files are layered.
func Check(dir string) ([]Cycle, error) {
	p, err := Load(dir)
	if err != nil {
		return nil, err
	}
	return p.Cycles(), nil
}

// Cycles returns the components of p's file graph with more than one file, ordered by their
// first file.
func (p *Package) Cycles() []Cycle {
	out := map[string][]Ref{}
	for _, e := range p.Edges {
		out[e.From] = append(out[e.From], e)
	}
	var cycles []Cycle
	for _, comp := range components(p.Files, out) {
		if len(comp) < 2 {
			continue
		}
		slices.Sort(comp)
		c := Cycle{Files: comp}
		for _, f := range comp {
			for _, e := range out[f] {
				if slices.Contains(comp, e.To) {
					c.Edges = append(c.Edges, e)
				}
			}
		}
		c.Path = shortestCycle(comp[0], comp, out)
		cycles = append(cycles, c)
	}
	slices.SortFunc(cycles, func(a, b Cycle) int { return strings.Compare(a.Files[0], b.Files[0]) })
	return cycles
}

// components are the strongly connected components of the graph (Tarjan's algorithm).
func components(nodes []string, out map[string][]Ref) [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var comps [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack, onStack[v] = append(stack, v), true
		for _, e := range out[v] {
			w := e.To
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []string
		for {
			w := stack[len(stack)-1]
			stack, onStack[w] = stack[:len(stack)-1], false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		comps = append(comps, comp)
	}
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return comps
}

// shortestCycle is a shortest path from start back to start within comp (breadth first, the
// edges in file order, so the same graph gives the same path).
func shortestCycle(start string, comp []string, out map[string][]Ref) []Ref {
	via := map[string]Ref{} // how each file was first reached
	queue := []string{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, e := range out[v] {
			if !slices.Contains(comp, e.To) {
				continue
			}
			if e.To == start {
				path := []Ref{e}
				for f := v; f != start; f = via[f].From {
					path = append(path, via[f])
				}
				slices.Reverse(path)
				return path
			}
			if _, seen := via[e.To]; !seen {
				via[e.To] = e
				queue = append(queue, e.To)
			}
		}
	}
	panic(fmt.Sprintf("layers: %s is in a component without a cycle through it", start))
}
