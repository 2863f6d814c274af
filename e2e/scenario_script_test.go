package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/scenario"
)

// scripts/safety-matrix.sh lists the columns it runs; they are the scenarios, in order.
func TestSafetyMatrixScriptListsEveryScenario(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../scripts/safety-matrix.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*scenarios=\(([a-z -]+)\)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("scripts/safety-matrix.sh: no scenarios=(…) line")
	}
	if got, want := strings.Fields(string(m[1])), scenario.Names(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("scripts/safety-matrix.sh runs %q, want the scenarios %q", got, want)
	}
	m = regexp.MustCompile(`(?m)^rows=\(([a-z0-9:=. -]+)\)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("scripts/safety-matrix.sh: no rows=(…) line")
	}
	if got := strings.Fields(string(m[1])); strings.Join(got, " ") != strings.Join(scenario.Drivers, " ") {
		t.Errorf("scripts/safety-matrix.sh has the rows %q, want scenario.Drivers %q", got, scenario.Drivers)
	}
}
