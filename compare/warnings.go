package compare

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// warnings lists what differs between the sides beyond the code under test and may explain a
// change by itself: the machine, the Redis version and the settings of it that move lock
// figures, the deployment, the CPU placement, the lockbench build, the values of the case
// fields the comparison ignores, and runs that did not complete. Each names what differs.
func warnings(base, new []*results.File, ignore []string) []string {
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
	differ("Redis settings", redisSettings)
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
	differ("CPU placements", func(f *results.File) string {
		if f.Placement == nil {
			return "unknown"
		}
		return f.Placement.String()
	})
	differ("lockbench builds", func(f *results.File) string {
		if f.Version == "" {
			return "unknown"
		}
		return f.Version
	})
	for _, field := range ignore {
		differ(field+" (ignored: compared across it)", func(f *results.File) string {
			var vals []string
			for _, r := range f.Runs {
				v := r.Case().Get(field)
				if v == "" {
					v = "none"
				}
				if !slices.Contains(vals, v) {
					vals = append(vals, v)
				}
			}
			slices.Sort(vals)
			return strings.Join(vals, ", ")
		})
	}
	out = append(out, labelWarnings(base, new)...)
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

// redisSettings are the settings of a file's deployment that move lock figures by themselves:
// persistence (AOF and its fsync, RDB saves) and eviction, per role. "unknown" for files
// without a deployment inspection.
func redisSettings(f *results.File) string {
	if f.Deployment == nil || len(f.Deployment.Nodes) == 0 {
		return "unknown"
	}
	var parts []string
	for _, n := range f.Deployment.Nodes {
		aof := "off"
		if n.AOF {
			aof = "on"
			if n.AOFFsync != "" {
				aof += " fsync " + n.AOFFsync
			}
		}
		rdb := n.RDBSave
		if rdb == "" {
			rdb = "none"
		}
		p := fmt.Sprintf("%s: aof %s, rdb save %q, maxmemory-policy %s", n.Role, aof, rdb, n.MaxmemoryPolicy)
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// settingsWarnings names the driver settings (driver_settings: pool sizes, batching, sync, the
// client library's version…) that differ between a group's BASE and NEW runs: a driver run
// with other options, or another build of its library, is another driver.
func settingsWarnings(group string, bg, ng *results.Group) []string {
	b, n := settingsOf(bg), settingsOf(ng)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(b, n))) {
		bv, nv := b[k], n[k]
		if slices.Equal(bv, nv) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: driver setting %s differs: BASE %s, NEW %s", group, k, orNone(bv), orNone(nv)))
	}
	return out
}

// settingsOf collects each driver setting's distinct values over a group's runs, sorted.
func settingsOf(g *results.Group) map[string][]string {
	out := map[string][]string{}
	for _, r := range g.Runs {
		for k, v := range r.DriverSettings {
			if !slices.Contains(out[k], v) {
				out[k] = append(out[k], v)
			}
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

func mergeKeys(a, b map[string][]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "(none)"
	}
	return strings.Join(v, " | ")
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
