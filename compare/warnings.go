package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// warnings lists what differs between the sides beyond the code under test
// and may explain a change by itself: the machine, the Redis version, the
// deployment, and runs that did not complete.
func warnings(base, new []*results.File) []string {
	var out []string
	differ := func(what string, f func(*results.File) string) {
		b, n := distinct(base, f), distinct(new, f)
		if !slices.Equal(b, n) {
			out = append(out, fmt.Sprintf("BASE and NEW ran on different %s: BASE %s, NEW %s", what, strings.Join(b, " | "), strings.Join(n, " | ")))
		}
	}
	differ("hosts", func(f *results.File) string {
		h := f.Host
		name := h.Hostname
		if name == "" {
			name = "unknown host"
		}
		return fmt.Sprintf("%s (%s/%s, %d CPUs, GOMAXPROCS %d)", name, h.GOOS, h.GOARCH, h.NumCPU, h.GOMAXPROCS)
	})
	differ("Redis versions", func(f *results.File) string {
		if f.RedisVersion == "" {
			return "unknown"
		}
		return f.RedisVersion
	})
	differ("topologies", func(f *results.File) string {
		t := f.Topology
		if t == nil {
			return "unknown"
		}
		s := t.Spec + " (" + t.Provider
		if t.MasterName != "" {
			s += ", master " + t.MasterName
		}
		return s + ")"
	})
	for _, side := range []struct {
		name  string
		files []*results.File
	}{{"BASE", base}, {"NEW", new}} {
		n, total := 0, 0
		for _, f := range side.files {
			for _, r := range f.Runs {
				total++
				if !r.Complete {
					n++
				}
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s has %d incomplete runs of %d (interrupted or failed); they count with what they measured", side.name, n, total))
		}
	}
	return out
}

// distinct returns the sorted distinct values of f over files.
func distinct(files []*results.File, f func(*results.File) string) []string {
	var out []string
	for _, file := range files {
		if v := f(file); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
