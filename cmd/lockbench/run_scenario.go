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

// applyScenario sets every flag of the scenario name that the command line left unset, and
// says on w which flags the scenario set. A flag the user gave, repeatable ones (--fault)
// included, keeps the user's values only.
func applyScenario(fs *pflag.FlagSet, name string, w io.Writer) error {
	s, err := scenario.Get(name)
	if err != nil {
		return fmt.Errorf("--scenario: %w", err)
	}
	user := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { user[f.Name] = true })
	var set []string
	for _, arg := range s.Flags() {
		flag, value, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if user[flag] {
			continue
		}
		if err := fs.Set(flag, value); err != nil {
			// A scenario whose flags do not parse is a bug of lockbench, not of the user.
			return fmt.Errorf("--scenario %s: flag %s: %w", name, arg, err)
		}
		set = append(set, arg)
	}
	if w != nil {
		fmt.Fprintf(w, "scenario %s (%s): %s\n", s.Name, s.Column, strings.Join(set, " "))
	}
	return nil
}
