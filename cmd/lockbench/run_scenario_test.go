package main

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/scenario"
)

// Every scenario of the safety matrix parses against run's flags and passes run's checks: a
// renamed fault or flag fails here, not in a reader's terminal.
func TestScenariosParse(t *testing.T) {
	t.Parallel()
	for _, name := range scenario.Names() {
		if err := parseOnly([]string{"run", "--scenario", name}); err != nil {
			t.Errorf("lockbench run --scenario %s: %v", name, err)
		}
	}
	if err := parseOnly([]string{"run", "--scenario", "pause"}); err == nil ||
		!strings.Contains(err.Error(), `unknown scenario "pause": want one of pause-over-lease`) {
		t.Errorf("an unknown scenario: %v", err)
	}
}
