package extdriver

import "strings"

// NeedsReferee reports whether a run of these driver specs should have a safety referee even
// when none was asked for: an external driver's lock is not trusted, so every holder is marked
// on the referee too (issue 41). lockbench run's referee flags call it to default to a native
// referee.
func NeedsReferee(specs []string) bool {
	for _, s := range specs {
		if strings.HasPrefix(s, SchemePrefix+":") {
			return true
		}
	}
	return false
}
