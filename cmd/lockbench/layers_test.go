package main

import (
	"testing"

	"github.com/lockbench/lockbench/internal/layers"
)

// TestFilesLayered holds cmd/lockbench to issue 37's layering: no file uses a name declared in
// a file that uses it back, directly or through others. It logs the package's non-test lines,
// which the issue wants under 3,000.
func TestFilesLayered(t *testing.T) {
	t.Parallel()
	p, err := layers.Load(".")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d non-test files, %d lines", len(p.Files), p.Lines)
	for _, c := range p.Cycles() {
		t.Errorf("files that use each other: %v\n  a cycle: %s", c.Files, c)
		for _, e := range c.Edges {
			t.Logf("  %s", e)
		}
	}
}
