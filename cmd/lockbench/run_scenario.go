package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/lockbench/lockbench/scenario"
	"github.com/spf13/pflag"
)

// addScenarioFlag defines run's --scenario.
func addScenarioFlag(fs *pflag.FlagSet, name *string) {
	fs.StringVar(name, "scenario", "", "start from the flags of a column of the safety matrix (docs/safety-matrix.md): "+
		strings.Join(scenario.Names(), ", ")+"; flags given on the command line win over the scenario's (e.g. --driver lockcore,naive for two rows)")
}

// applyScenario sets every flag of the scenario name that the command line left unset
// (scenario.Scenario.Apply), and says on w which flags the scenario set.
func applyScenario(fs *pflag.FlagSet, name string, w io.Writer) error {
	s, err := scenario.Get(name)
	if err != nil {
		return fmt.Errorf("--scenario: %w", err)
	}
	set, err := s.Apply(fs.Changed, fs.Set)
	if err != nil {
		return err
	}
	if w != nil {
		fmt.Fprintf(w, "scenario %s (%s): %s\n", s.Name, s.Column, strings.Join(set, " "))
	}
	return nil
}
