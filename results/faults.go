package results

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Fault is one fault of a run's schedule (lockbench run --fault) and what became of it. Times
// are in seconds from the start of the measured phase (Timeline.Start). It is a plain value.
type Fault struct {
	// Spec is the fault as written, e.g. "kill:master@3s"; Action and Node are its parts.
	Spec   string `json:"spec"`
	Action string `json:"action"`
	Node   string `json:"node,omitempty"`
	// Addr is the server the fault acted on, resolved when it fired.
	Addr string `json:"addr,omitempty"`
	// AtS is when the fault was to start; ForS how long a pause or partition was to last.
	AtS  float64 `json:"at_s"`
	ForS float64 `json:"for_s,omitempty"`
	// Fired says the fault started, at FiredS; TookS is how long the action took (a kill until
	// the process was gone, a restart until it answered); LastedS is, for a pause or
	// partition, the time until it was undone, else TookS.
	Fired   bool    `json:"fired"`
	FiredS  float64 `json:"fired_s,omitempty"`
	TookS   float64 `json:"took_s,omitempty"`
	LastedS float64 `json:"lasted_s,omitempty"`
	// Error is why the fault, or undoing it, failed; empty when it worked.
	Error string `json:"error,omitempty"`
	// FirstGrantS is the time to first grant after the fault: from FiredS to the earliest
	// grant of a lock to a cycle that began once the fault was in effect — at FiredS, or for
	// a kill at FiredS+TookS, once the process was gone, as it answered until then (cycles
	// already waiting by then do not count, whenever they were granted). Nil when no such
	// cycle was granted before the phase ended, and for client faults (pause-client, stall), whose
	// effect is on some workers only and whose grants are made in other processes.
	FirstGrantS *float64 `json:"first_grant_s,omitempty"`
	// StalledWorkers is, for a stall that fired, how many workers of its generator process
	// held a lock when it started and were kept inside their critical section until it ended
	// (0: none held one then); nil for the other actions.
	StalledWorkers *int64 `json:"stalled_workers,omitempty"`
}

// FirstGrant returns FirstGrantS as a duration, and false when there was none.
func (f *Fault) FirstGrant() (time.Duration, bool) {
	if f.FirstGrantS == nil {
		return 0, false
	}
	return time.Duration(*f.FirstGrantS * float64(time.Second)), true
}

// SetFirstGrant sets FirstGrantS from d.
func (f *Fault) SetFirstGrant(d time.Duration) {
	s := d.Seconds()
	f.FirstGrantS = &s
}

// maxTimelineRows is how many timeline points the fault summary prints whole; a longer
// timeline is shown around its faults only.
const maxTimelineRows = 120

// WriteFaults writes, for each run with faults, its faults (when each fired, on which node,
// what it did, the time to first grant after it), its errors by kind and violations, and its
// timeline, where the gap and the recovery show. It writes nothing when no run had faults.
func WriteFaults(w io.Writer, runs []Run) error {
	var buf bytes.Buffer
	for i := range runs {
		r := &runs[i]
		if len(r.Faults) == 0 {
			continue
		}
		name := r.Driver
		if r.Round > 0 {
			name += fmt.Sprintf(" round %d", r.Round)
		}
		fmt.Fprintf(&buf, "\nfaults: %s: %d acquisitions, errors %s, violations %d\n", name, r.Acquisitions, errorKinds(r.ErrorsByKind), r.Violations)
		tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  fault\tnode\tfired\ttook\tlasted\tfirst grant after\terror")
		for _, f := range r.Faults {
			fired, took, lasted, grant := "-", "-", "-", "-"
			if f.Fired {
				fired = fmt.Sprintf("%.3fs", f.FiredS)
				took = secs(f.TookS)
				lasted = secs(f.LastedS)
				grant = "none before the end"
				if f.Action == "pause-client" || f.Action == "stall" {
					grant = "-" // not followed: see FirstGrantS
				}
				if d, ok := f.FirstGrant(); ok {
					grant = d.Round(time.Millisecond / 10).String()
				}
			}
			node := f.Node
			if f.Addr != "" {
				node = strings.TrimSpace(node + " " + f.Addr)
			}
			if f.StalledWorkers != nil {
				node += fmt.Sprintf(" (%d holders stalled)", *f.StalledWorkers)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Spec, orDash(node), fired, took, lasted, grant, orDash(f.Error))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := writeFaultTimeline(&buf, r); err != nil {
			return err
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeFaultTimeline writes r's timeline: every point if there are few, else those near a
// fault (from one point before it fired to three after its first grant).
func writeFaultTimeline(w io.Writer, r *Run) error {
	tl := r.Timeline
	if tl == nil || len(tl.Points) == 0 {
		return nil
	}
	show := func(TimelinePoint) bool { return true }
	if len(tl.Points) > maxTimelineRows {
		show = func(p TimelinePoint) bool {
			for _, f := range r.Faults {
				if !f.Fired {
					continue
				}
				end := f.FiredS + max(f.LastedS, f.TookS)
				if d, ok := f.FirstGrant(); ok {
					end = max(end, f.FiredS+d.Seconds())
				}
				if p.StartS+p.DurationS > f.FiredS-tl.IntervalS && p.StartS < end+3*tl.IntervalS {
					return true
				}
			}
			return false
		}
	}
	fmt.Fprintf(w, "  timeline (%s points, from the start of the measured phase; * = a fault fired in it):\n", secs(tl.IntervalS))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  \tfrom\tacq/s\tacquisitions\terrors\tacquire p99\t")
	prec := 1 // decimals of "from": enough to tell the points apart
	switch {
	case tl.IntervalS < 0.1:
		prec = 3
	case tl.IntervalS < 1:
		prec = 2
	}
	skipped := false
	for _, p := range tl.Points {
		if !show(p) {
			skipped = true
			continue
		}
		if skipped {
			fmt.Fprintln(tw, "  \t…\t\t\t\t\t")
			skipped = false
		}
		mark := ""
		for _, f := range r.Faults {
			if f.Fired && f.FiredS >= p.StartS && f.FiredS < p.StartS+p.DurationS {
				mark = "*"
			}
		}
		p99 := "-"
		if p.Acquisitions > 0 {
			p99 = (time.Duration(p.AcquireP99US) * time.Microsecond).String()
		}
		fmt.Fprintf(tw, "  %s\t%.*fs\t%.0f\t%d\t%d\t%s\t\n", mark, prec, p.StartS, p.ThroughputPerS, p.Acquisitions, p.Errors, p99)
	}
	if skipped {
		fmt.Fprintln(tw, "  \t…\t\t\t\t\t")
	}
	return tw.Flush()
}

func errorKinds(m map[string]int64) string {
	if len(m) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond / 10).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
