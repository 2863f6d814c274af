package report

import (
	"path/filepath"

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
