package scenario

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagApply: --scenario sets the flags the command line left unset, says which on w, and
// leaves the ones given alone; an unknown name wraps ErrUnknown; none does nothing.
func TestFlagApply(t *testing.T) {
	t.Parallel()
	s := All()[0]
	newSet := func() (*Flag, *pflag.FlagSet) {
		f := &Flag{}
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.Register(fs)
		// Every flag the scenarios set, as run's flag set has them.
		for _, sc := range All() {
			for _, a := range sc.Flags() {
				name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if strings.HasPrefix(a, "--") && fs.Lookup(name) == nil {
					fs.StringArray(name, nil, "")
				}
			}
		}
		return f, fs
	}
	f, fs := newSet()
	if err := fs.Parse([]string{"--scenario", s.Name, "--driver", "naive"}); err != nil {
		t.Fatal(err)
	}
	var said bytes.Buffer
	if err := f.Apply(fs, &said); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(said.String(), "scenario "+s.Name+" ("+s.Column+"): ") {
		t.Errorf("said %q", said.String())
	}
	if strings.Contains(said.String(), "--driver") {
		t.Errorf("the scenario set --driver, which the command line gave: %q", said.String())
	}
	if err := f.Apply(fs, nil); err != nil {
		t.Errorf("applied again, saying nothing: %v", err)
	}

	f, fs = newSet()
	if err := fs.Parse([]string{"--scenario", "pause"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Apply(fs, nil); !errors.Is(err, ErrUnknown) || !strings.HasPrefix(err.Error(), "--scenario: ") {
		t.Errorf("an unknown scenario: %v", err)
	}
	f, fs = newSet()
	if err := f.Apply(fs, &said); err != nil {
		t.Errorf("no scenario: %v", err)
	}
}
