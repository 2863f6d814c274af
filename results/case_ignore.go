package results

import (
	"fmt"
	"slices"
	"strings"
)

// CaseLabels names the labels a Case can have, in the order Case lists them: workload,
// topology, then every other field tagged `lockbench:"case"` by its JSON name. It is safe for
// concurrent use.
func CaseLabels() []string {
	var out []string
	for _, f := range caseFields() {
		out = append(out, f.name)
		if f.name == "workload" {
			out = append(out, "topology")
		}
	}
	return out
}

// CheckCaseLabels returns an error naming the first of names that is no case label, and the
// labels there are; nil when all are.
func CheckCaseLabels(names []string) error {
	all := CaseLabels()
	for _, n := range names {
		if !slices.Contains(all, n) {
			return fmt.Errorf("%q is not a case field (case fields: %s)", n, strings.Join(all, ", "))
		}
	}
	return nil
}

// Without returns c less the labels called one of names, as benchstat's -ignore leaves keys
// out of what makes two results the same benchmark.
func (c Case) Without(names ...string) Case {
	if len(names) == 0 {
		return c
	}
	return slices.DeleteFunc(slices.Clone(c), func(l Label) bool { return slices.Contains(names, l.Name) })
}

// GroupRunsIgnoring is GroupRuns with the case labels named in ignore left out of what makes
// runs repetitions of each other: runs that differ only in them (a --net, a topology) pool into
// one group, whose Case is its first run's (callers show Case().Without(ignore...)). The names
// are case labels (see CaseLabels); others are ignored. It is safe for concurrent use.
func GroupRunsIgnoring(runs []Run, ignore []string) []Group {
	var groups []Group
	index := make(map[string]int)
	for _, r := range runs {
		k := r.Case().Without(ignore...).String() + "\x00" + r.Driver
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, Group{})
		}
		groups[i].Runs = append(groups[i].Runs, r)
	}
	for i := range groups {
		groups[i].summarize()
	}
	return groups
}
