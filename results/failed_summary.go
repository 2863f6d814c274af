package results

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
)

// WriteFailed writes, for each run that lockbench failed for a cause of its own (Run.Failed: no
// acquisition, the servers' refusals, a stall) or that counted errors, the causes and each error
// kind's first message, so that the summary says why and not only how often. It writes nothing
// when no run has either.
func WriteFailed(w io.Writer, runs []Run) error {
	var buf bytes.Buffer
	for i := range runs {
		r := &runs[i]
		if len(r.Failed) == 0 && len(r.ErrorSamples) == 0 {
			continue
		}
		if buf.Len() == 0 {
			buf.WriteString("\nwhy runs failed or erred (the result's failed and error_samples):\n")
		}
		name := r.Driver
		if r.Round > 0 {
			name += fmt.Sprintf(" round %d", r.Round)
		}
		for _, cause := range r.Failed {
			fmt.Fprintf(&buf, "  %s: %s\n", name, cause)
		}
		if r.ServerStall != nil && len(r.Failed) == 0 {
			fmt.Fprintf(&buf, "  %s: stall (not failed): %s did not answer for %.1fs from %.1fs into the measured phase\n", name, r.ServerStall.Addr, r.ServerStall.LongestS, r.ServerStall.AtS)
		}
		for _, kind := range slices.Sorted(maps.Keys(r.ErrorSamples)) {
			for _, msg := range r.ErrorSamples[kind] {
				fmt.Fprintf(&buf, "  %s: %d %s errors, e.g. %s\n", name, r.ErrorsByKind[kind], kind, msg)
				break // the first says what; all are in the result file
			}
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}
