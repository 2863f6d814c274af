package scenario

import (
	"fmt"
	"strings"
)

// Apply sets every flag of s (Flags) that the command line left unset. given says which flags
// the command line set (pflag.FlagSet.Changed); it is asked for all of them before any is set,
// so that a repeatable flag the scenario gives twice (redlock-restart's two --fault) is set
// twice. set sets one flag (pflag.FlagSet.Set). A flag the user gave, repeatable ones (--fault)
// included, keeps the user's values only. It returns the flags it set, each "--name=value".
func (s Scenario) Apply(given func(flag string) bool, set func(flag, value string) error) ([]string, error) {
	user := map[string]bool{}
	for _, arg := range s.Flags() {
		flag, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		user[flag] = given(flag)
	}
	var done []string
	for _, arg := range s.Flags() {
		flag, value, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if user[flag] {
			continue
		}
		if err := set(flag, value); err != nil {
			// A scenario whose flags do not parse is a bug of lockbench, not of the user.
			return done, fmt.Errorf("--scenario %s: flag %s: %w", s.Name, arg, err)
		}
		done = append(done, arg)
	}
	return done, nil
}
