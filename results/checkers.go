package results

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// The safety checkers a run can have, as Run.Checkers names them.
const (
	// CheckerInProcess is the per-key holder counters of one process (package workloads).
	CheckerInProcess = "in-process"
	// CheckerSharedMemory is those counters in memory the processes of one machine map
	// (package crosscheck): it sees every process of the machine.
	CheckerSharedMemory = "shared-memory"
	// CheckerReferee is a separate Redis every holder marks its critical section on (package
	// referee): it sees every process on every machine.
	CheckerReferee = "referee"
)

// MaxRefereeExamples bounds the violations a referee names in a result.
const MaxRefereeExamples = 20

// Referee is what the safety referee (package referee) saw of a run, or of one process's share.
// It is a plain value.
type Referee struct {
	// Addr is the referee's address, any password redacted.
	Addr string `json:"addr"`
	// Entries counts the critical sections marked on it.
	Entries int64 `json:"entries"`
	// Violations counts the holders that found another inside (each counted by the one that
	// entered second); Examples names the first few: the lock and both holders.
	Violations int64    `json:"violations"`
	Examples   []string `json:"examples,omitempty"`
	// Errors counts the marks that failed (the referee did not answer): sections it did not see.
	Errors int64 `json:"errors,omitempty"`
}

// add adds o's counts and examples to r.
func (r *Referee) add(o *Referee) {
	if r.Addr == "" {
		r.Addr = o.Addr
	}
	r.Entries += o.Entries
	r.Violations += o.Violations
	r.Errors += o.Errors
	for _, e := range o.Examples {
		if len(r.Examples) < MaxRefereeExamples {
			r.Examples = append(r.Examples, e)
		}
	}
}

// commonCheckers returns the checkers in both a and b, in a's order: a merged run's checker
// covers it only if every process ran it.
func commonCheckers(a, b []string) []string {
	var out []string
	for _, c := range a {
		if slices.Contains(b, c) {
			out = append(out, c)
		}
	}
	return out
}

// WriteCheckers writes one line per run that names its safety checkers, with the referee's
// count when one ran, e.g. "checkers lockcore: in-process, shared-memory, referee (0
// violations in 51234 sections)". Runs from before checkers were recorded are left out.
func WriteCheckers(w io.Writer, runs []Run) error {
	for i := range runs {
		r := &runs[i]
		if len(r.Checkers) == 0 {
			continue
		}
		line := fmt.Sprintf("checkers %s: %s", r.Driver, strings.Join(r.Checkers, ", "))
		if ref := r.Referee; ref != nil {
			line += fmt.Sprintf(" (referee %s: %d violations in %d sections", ref.Addr, ref.Violations, ref.Entries)
			if ref.Errors > 0 {
				line += fmt.Sprintf(", %d marks failed", ref.Errors)
			}
			line += ")"
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
