package report

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// ReadSources reads the result files at paths (results.ReadFile), each named by SourceNames.
// It stops at the first file that cannot be read, with results.ReadFile's error.
func ReadSources(paths []string) ([]Source, error) {
	names := SourceNames(paths)
	sources := make([]Source, len(paths))
	for i, path := range paths {
		f, err := results.ReadFile(path)
		if err != nil {
			return nil, err
		}
		sources[i] = Source{Name: names[i], File: f}
	}
	return sources, nil
}

// SourceNames labels each file by its base name, or by the path as given when two files share
// a base name (base/x.json and new/x.json).
func SourceNames(paths []string) []string {
	count := make(map[string]int)
	for _, p := range paths {
		count[filepath.Base(p)]++
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
		if count[names[i]] > 1 {
			names[i] = p
		}
	}
	return names
}

// Write builds the report of sources with opts and writes it into dir, which must exist (see
// CheckDir). It returns the paths written, the page first, also when it fails part way.
func Write(dir string, sources []Source, opts Options) ([]string, error) {
	rep, err := Build(sources, opts)
	if err != nil {
		return nil, err
	}
	return rep.WriteFiles(dir)
}

// ParseSpec splits a FILE argument of lockbench report, "NAME=PATH" or "PATH", into the label
// NAME ("" when there is none) and the path. An argument is a label only when NAME is a
// label a result file may carry (results.CheckLabel: "BASE", "v1.2", "rc-2", never with "=" or
// "/") and the whole argument is not an existing file, so that
// "BASE=base/" is labelled and "./a=b.json" is a path. It is safe for concurrent use.
func ParseSpec(arg string) (label, path string) {
	name, rest, ok := strings.Cut(arg, "=")
	if !ok || results.CheckLabel(name) != nil || rest == "" {
		return "", arg
	}
	if _, err := os.Stat(arg); err == nil {
		return "", arg
	}
	return name, rest
}

// ReadSpecs reads the result files of FILE arguments ("NAME=PATH" or "PATH", see ParseSpec;
// --label NAME=PATH values are the same): a PATH that is a directory stands for every *.json
// file directly inside it, in name order, as in lockbench compare. The files of one label
// are one set in the report (their runs pool). A file of an unlabelled PATH is labelled by its
// own label (results.File.Label, lockbench run --label) when it has one, else the PATH is a set
// of its own, labelled with the shortest part of its path that tells it apart from the others
// (ShortLabels). It stops at the first file that cannot be read, with results.ReadFile's
// error. It is safe for concurrent use.
func ReadSpecs(specs []string) ([]Source, error) {
	type entry struct{ label, path string }
	var entries []entry
	var unlabelled []string
	for _, spec := range specs {
		label, path := ParseSpec(spec)
		entries = append(entries, entry{label, path})
		if label == "" {
			unlabelled = append(unlabelled, path)
		}
	}
	short := ShortLabels(unlabelled)
	var sources []Source
	var paths []string
	k := 0
	for _, e := range entries {
		given := e.label != ""
		if !given {
			e.label = short[k]
			k++
		}
		files := []string{e.path}
		if st, err := os.Stat(e.path); err == nil && st.IsDir() {
			files, _ = filepath.Glob(filepath.Join(e.path, "*.json"))
			slices.Sort(files)
			if len(files) == 0 {
				return nil, fmt.Errorf("%s: no *.json result files in the directory", e.path)
			}
		}
		for _, p := range files {
			f, err := results.ReadFile(p)
			if err != nil {
				return nil, err
			}
			label := e.label
			if !given && f.Label != "" {
				label = f.Label
			}
			sources = append(sources, Source{Label: label, File: f})
			paths = append(paths, p)
		}
	}
	for i, name := range SourceNames(paths) {
		sources[i].Name = name
	}
	return sources, nil
}

// ShortLabels labels each path by what tells it apart from the others: its parts (split at
// "/", "-" and "_", less a ".json" at the end) less those all the paths share at the start and at the end, so
// base/x.json and new/x.json are "base" and "new", and lockbench-20261123T110421Z-contention.json
// and lockbench-20261123T120502Z-contention.json are "20261123T110421Z" and
// "20261123T120502Z". One path is labelled by its base name without ".json"; paths that
// would share a label are labelled by their place ("#2"). It is safe for concurrent use.
func ShortLabels(paths []string) []string {
	split := func(p string) []string {
		return strings.FieldsFunc(strings.TrimSuffix(filepath.ToSlash(filepath.Clean(p)), ".json"), func(r rune) bool {
			return r == '/' || r == '-' || r == '_' // not '.': v1.2 and v1.3 stay whole
		})
	}
	out := make([]string, len(paths))
	if len(paths) == 0 {
		return out
	}
	if len(paths) == 1 {
		out[0] = strings.TrimSuffix(filepath.Base(paths[0]), ".json")
		return out
	}
	parts := make([][]string, len(paths))
	for i, p := range paths {
		parts[i] = split(p)
	}
	shared := func(at func(ps []string, k int) (string, bool)) int {
		for k := 0; ; k++ {
			v, ok := at(parts[0], k)
			for _, ps := range parts[1:] {
				w, ok2 := at(ps, k)
				if !ok || !ok2 || w != v {
					return k
				}
			}
		}
	}
	head := shared(func(ps []string, k int) (string, bool) {
		if k < len(ps) {
			return ps[k], true
		}
		return "", false
	})
	tail := shared(func(ps []string, k int) (string, bool) {
		if k < len(ps) {
			return ps[len(ps)-1-k], true
		}
		return "", false
	})
	seen := make(map[string]int)
	for i, ps := range parts {
		lo, hi := min(head, len(ps)), max(len(ps)-tail, 0)
		if lo >= hi {
			out[i] = strings.TrimSuffix(filepath.Base(paths[i]), ".json")
		} else {
			out[i] = strings.Join(ps[lo:hi], "-")
		}
		seen[out[i]]++
	}
	for i := range out {
		if seen[out[i]] > 1 || out[i] == "" {
			out[i] = "#" + strconv.Itoa(i+1) // the same file twice, or names alike to the last part
		}
	}
	return out
}
