package sweep

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/results"
)

// FloorWarnFactor: a noise floor within this factor of the SLO's limit draws a warning. At a
// floor of half the limit, what the machine itself adds (waking the generator, scheduling the
// client, the loopback) takes half the SLO before Redis does any work, and run-to-run noise of
// the floor alone moves steps across the limit.
const FloorWarnFactor = 2

// floorLoad is the noise floor's rate: share of the first step, at least one per second.
func floorLoad(o *Options) float64 {
	return max(roundSignificant(o.FloorShare*o.Loads[0], 3), 1)
}

// noiseFloor measures every driver's SLO percentile at a rate so low that the deployment is
// idle (Options.FloorShare of the first step), before the first step: one run each, in the
// order of the drivers. It warns, in the record, when a floor is within FloorWarnFactor of
// the limit. Only a rate sweep has one: a closed loop has no schedule whose wake-ups would
// add to the latency, and its first step is the lowest load it has.
func (sw *sweeper) noiseFloor(ctx context.Context) error {
	o := sw.o
	if o.FloorShare <= 0 || o.Mode != results.SweepRate {
		return nil
	}
	load := floorLoad(o)
	limitUS := float64(o.SLO.Limit) / float64(time.Microsecond)
	for _, s := range sw.states {
		if ctx.Err() != nil {
			return nil
		}
		sw.seq++
		step := Step{Driver: s.rec.Driver, Load: load, Floor: true, Round: 1, Seq: sw.seq, Total: len(sw.states) + sw.gridLeft()}
		run, err := sw.call(ctx, step, len(sw.states)-sw.seq+1)
		f := results.SweepFloor{Driver: s.rec.Driver, Load: load, Run: -1}
		switch {
		case errors.Is(err, ErrAbort):
			return err
		case err != nil:
			// The steps will say what is wrong with the driver; the floor just has none.
			f.Warning = "no noise floor: " + err.Error()
		default:
			f.Run = len(sw.out.Runs)
			sw.out.Runs = append(sw.out.Runs, run)
			lat, lerr := LatencyUS(&run, o.SLO.Percentile)
			switch {
			case lerr != nil:
				f.Warning = "no noise floor: " + lerr.Error()
			case run.Acquisitions == 0:
				f.Warning = "no noise floor: no acquisition completed"
			default:
				f.LatencyUS = lat
				if lat*FloorWarnFactor >= limitUS {
					f.Warning = fmt.Sprintf("the noise floor (%s %s at %s/s) is at least 1/%d of the SLO's %s: the machine itself adds that much before Redis does any work, and the knee will not be stable; loosen the SLO or quiet the machine",
						o.SLO.Name, fmtLatency(lat), fmtLoad(load), FloorWarnFactor, fmtLatency(limitUS))
				}
			}
		}
		sw.out.Sweep.NoiseFloor = append(sw.out.Sweep.NoiseFloor, f)
	}
	return nil
}
