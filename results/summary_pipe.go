package results

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// NullDriver is the external-driver null adapter's row (extdriver.NullSpec): the protocol over an
// in-memory lock, its latency what the pipe adds to an external (exec:) driver's. A row
// "exec:null=COMMAND" is one too.
const NullDriver = "exec:null"

func isNullRow(driver string) bool {
	return driver == NullDriver || strings.HasPrefix(driver, NullDriver+"=")
}

// writePipe states each external driver's acquire latency beside the null adapter's, measured
// in the same invocation on the same case: the part of it that is the protocol's pipe, not the
// library (docs/external-drivers.md).
func writePipe(buf *bytes.Buffer, groups []Group, label func(*Group) string) {
	sep := "\n"
	for i := range groups {
		n := &groups[i]
		if !isNullRow(n.Driver()) || n.AcquireP50US <= 0 {
			continue
		}
		for j := range groups {
			g := &groups[j]
			if !strings.HasPrefix(g.Driver(), "exec:") || isNullRow(g.Driver()) || g.AcquireP50US <= 0 || g.Case().String() != n.Case().String() {
				continue
			}
			if sep != "" {
				fmt.Fprintf(buf, "%sthe pipe in external drivers' latency (%s, the protocol with no lock work, same run: acquire p50 %s, p99 %s%s):\n",
					sep, label(n), latency(n.AcquireP50US), latency(n.AcquireP99US), cpuSplit(n))
				sep = ""
			}
			fmt.Fprintf(buf, "  %s: acquire p50 %s (the pipe %s), p99 %s (the pipe %s)%s\n", label(g),
				latency(g.AcquireP50US), pipeShare(n.AcquireP50US, g.AcquireP50US), latency(g.AcquireP99US), pipeShare(n.AcquireP99US, g.AcquireP99US), cpuSplit(g))
		}
	}
}

// pipeShare is part as a percentage of whole, "-" when either is unmeasured.
func pipeShare(part, whole float64) string {
	if part <= 0 || whole <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*part/whole, 'f', 0, 64) + "%"
}

// cpuSplit states an external driver's client CPU per acquisition and the adapter process's part
// of it (medians), "" when the adapter's was not measured.
func cpuSplit(g *Group) string {
	a, c := g.AdapterCPUPerAcquisitionUS, g.ClientCPUPerAcquisitionUS
	if a <= 0 || c <= 0 {
		return ""
	}
	return fmt.Sprintf("; client CPU/acq %s, the adapter's %s of it", cpuTime(c), cpuTime(a))
}
