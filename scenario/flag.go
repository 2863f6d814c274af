package scenario

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Flag is lockbench run's --scenario: start from the flags of a column of the safety matrix.
// A Flag is used by one goroutine.
type Flag struct {
	Name string // "": none
}

// Register adds --scenario to fs.
func (f *Flag) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Name, "scenario", "", "start from the flags of a column of the safety matrix (docs/safety-matrix.md): "+
		strings.Join(Names(), ", ")+"; flags given on the command line win over the scenario's (e.g. --driver lockcore,naive for two rows)")
}

// Apply sets every flag of fs that the named scenario gives and the command line left unset
// (Scenario.Apply), and says on w, unless nil, which flags the scenario set. Without a
// scenario it does nothing. An unknown name is an error wrapping ErrUnknown.
func (f *Flag) Apply(fs *pflag.FlagSet, w io.Writer) error {
	if f.Name == "" {
		return nil
	}
	s, err := Get(f.Name)
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
