package results

import (
	"fmt"
	"time"
)

// ClockSync is how a generator process placed itself on the deployment's clock (package clock)
// to start with the others, and how close to the common start its warm-up began by that clock.
// It is a plain value.
type ClockSync struct {
	// Source is the node whose TIME the process read ("local": it waited by its own clock).
	Source string `json:"source"`
	// OffsetMS is the node's clock minus the process's, as estimated, in milliseconds; RTTMS
	// the round trip of the sample it came from (the offset is right to within half of it);
	// Samples how many round trips were made.
	OffsetMS float64 `json:"offset_ms"`
	RTTMS    float64 `json:"rtt_ms"`
	Samples  int     `json:"samples"`
	// StartErrorMS is when the warm-up began, by the node's clock as estimated, minus the
	// common start time: how late (or, negative, early) this process started.
	StartErrorMS float64 `json:"start_error_ms"`
}

// SetClock records how process r's share placed itself on the deployment's clock: offset and
// rtt as estimated from samples round trips to source, and its warm-up's start converted to
// that clock, startedServer. Call it after SetProcess.
func (r *Run) SetClock(source string, offset, rtt time.Duration, samples int, startedServer time.Time) {
	if r.Fleet == nil || len(r.Fleet.Processes) != 1 {
		return
	}
	c := &ClockSync{Source: source, OffsetMS: ms(offset), RTTMS: ms(rtt), Samples: samples}
	if !r.Fleet.StartAt.IsZero() {
		c.StartErrorMS = ms(startedServer.Sub(r.Fleet.StartAt))
	}
	r.Fleet.Processes[0].Clock = c
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// setStartSpread sets the spread of the processes' start errors, when every process recorded
// one, and warns when it is above the warm-up: the processes' measured phases then do not
// start together, and the merged figures mix a warming process with measuring ones.
func (f *Fleet) setStartSpread(warmupS float64) {
	lo, hi, n := 0.0, 0.0, 0
	for _, p := range f.Processes {
		if p.Clock == nil || p.Clock.Source == ClockLocal {
			return // a process that trusted its own clock: no spread by the deployment's
		}
		e := p.Clock.StartErrorMS
		if n == 0 || e < lo {
			lo = e
		}
		if n == 0 || e > hi {
			hi = e
		}
		n++
	}
	if n == 0 {
		return
	}
	f.StartSpreadMS = hi - lo
	if f.StartSpreadMS > warmupS*1000 {
		f.Warnings = append(f.Warnings, fmt.Sprintf("the processes started %.1fms apart by the deployment's clock, more than the %gs warm-up: their measured phases do not begin together", f.StartSpreadMS, warmupS))
	}
}

// ClockLocal is ClockSync.Source for a process that waited by its own clock.
const ClockLocal = "local"
