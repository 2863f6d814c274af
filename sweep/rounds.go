package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// A step runs in rounds: its runs, interleaved with the other drivers' runs at the same step,
// taken together for its verdict.

// job is one step of one driver being run: its rounds so far.
type job struct {
	s       *driverState
	load    float64
	index   int
	refined bool
	runs    []*results.Run
	runIdx  []int
	done    bool   // decided: no further round
	err     error  // a round that could not run
	skipped string // the driver cannot run the workload
}

// runOne runs round r of j; pending is the runs left of the current step, this one included.
func (sw *sweeper) runOne(ctx context.Context, j *job, r, pending int) error {
	sw.seq++
	step := Step{Driver: j.s.rec.Driver, Index: j.index, Load: j.load, Refined: j.refined, Round: r, Seq: sw.seq}
	step.Total = sw.seq - 1 + sw.gridLeft() + pending
	run, err := sw.call(ctx, step, pending)
	switch {
	case errors.Is(err, ErrAbort):
		return err
	case errors.Is(err, drivers.ErrUnsupported):
		j.skipped, j.done = skipText(err), true
	case err != nil:
		j.err, j.done = err, true
	default:
		j.runIdx = append(j.runIdx, len(sw.out.Runs))
		sw.out.Runs = append(sw.out.Runs, run)
		j.runs = append(j.runs, &run)
	}
	return nil
}

// runStep runs the rounds of jobs (one step of each of several drivers, at each driver's own
// load), interleaved round by round as lockbench run --repeat does, then more rounds, one at a
// time, for the jobs still uncertain, and records each step.
func (sw *sweeper) runStep(ctx context.Context, jobs []*job) error {
	for r := 1; r <= sw.o.MaxRounds; r++ {
		var todo []*job
		for _, j := range jobs {
			if j.done {
				continue
			}
			if r > sw.o.Rounds {
				// Past the planned rounds only an uncertain step goes on, and only when more
				// rounds can narrow its interval.
				if rec, _ := sw.judge(j); rec.Verdict != results.VerdictUncertain || !canNarrow(len(j.runs), sw.o.MaxRounds, sw.o.Confidence) {
					j.done = true
					continue
				}
				if sw.overBudget(1) {
					j.done = true
					continue
				}
			}
			todo = append(todo, j)
		}
		for n, j := range todo {
			if ctx.Err() != nil {
				break
			}
			// The runs left of this step, this one included, at the planned rounds.
			pending := len(todo) - n + len(jobs)*max(sw.o.Rounds-r, 0)
			if err := sw.runOne(ctx, j, r, pending); err != nil {
				return err
			}
			if !j.done && len(j.runs) > 0 {
				// A round cut short, failed or stopped past the SLO decides the step: more
				// rounds would not change that it broke.
				last := j.runs[len(j.runs)-1]
				j.done = !last.Complete || last.Errors > 0 || last.Violations > 0 || last.Aborted != ""
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	for _, j := range jobs {
		if len(j.runs) == 0 && j.err == nil && j.skipped == "" {
			// The interrupt came before this step's first round: it did not run at all.
			if j.refined {
				j.s.refined = RefinedStopped
			} else if !j.s.stopped {
				j.s.stopped, j.s.rec.StoppedEarly, j.s.rec.StopReason = true, true, fmt.Sprintf("interrupted before step %d", j.index)
			}
			continue
		}
		sw.record(ctx, j)
	}
	return nil
}

// record decides j's step and adds it to its driver's record.
func (sw *sweeper) record(ctx context.Context, j *job) {
	s := j.s
	if j.skipped != "" {
		s.stopped, s.skipped, s.rec.StoppedEarly, s.rec.StopReason = true, true, true, "skipped: "+j.skipped
		return
	}
	rec, stop := sw.judge(j)
	rec.Step = j.index
	if ctx.Err() != nil && rec.Verdict == results.VerdictFailed && len(j.runs) == 0 {
		// Cut short by the interrupt, not broken.
		rec.Verdict, rec.Reason = results.VerdictIncomplete, "interrupted: "+rec.Reason
	}
	if rec.Verdict == results.VerdictFailed {
		sw.out.Failed = true
	}
	s.rec.Steps = append(s.rec.Steps, rec)
	s.runs[rec.Step] = j.runs
	if rec.Verdict == results.VerdictIncomplete && ctx.Err() != nil {
		stop = rec.Reason
	}
	if stop != "" && !j.refined {
		s.stopped = true
		if j.index < len(sw.o.Loads) {
			s.rec.StoppedEarly = true
		}
		s.rec.StopReason = fmt.Sprintf("step %d: %s", j.index, stop)
	}
	if sw.o.Progress != nil {
		step := Step{Driver: s.rec.Driver, Index: rec.Step, Load: j.load, Refined: j.refined, Round: len(j.runs), Seq: sw.seq, Total: sw.seq + sw.gridLeft()}
		if j.refined {
			stop = ""
		}
		sw.o.Progress(Event{Step: step, Done: true, Decided: true, Result: rec, StopReason: stop, Elapsed: sw.since(sw.start), Remaining: sw.remaining(0)})
	}
}

// judge decides j's step on its rounds so far, and says why the driver should take no further
// grid step ("" to go on).
func (sw *sweeper) judge(j *job) (results.SweepStep, string) {
	o := sw.o
	if len(j.runs) == 0 {
		reason := "no round ran"
		if j.err != nil {
			reason = j.err.Error()
		}
		return results.SweepStep{Load: j.load, Refined: j.refined, Run: -1, Verdict: results.VerdictFailed, Reason: reason}, reason
	}
	best, prev := sw.below(j.s, j.load)
	p, err := pool(j.runs, o.SLO.Percentile)
	var rec results.SweepStep
	var stop string
	if err != nil {
		rec = results.SweepStep{Load: j.load, Verdict: results.VerdictFailed, Reason: fmt.Sprintf("acquire histogram: %v", err)}
		stop = rec.Reason
	} else {
		rec, stop = o.judge(j.load, &p.run, p.latUS, best, prev)
		rec.P50US = p.p50US
		if len(j.runs) > 1 {
			rec.RoundLatencyUS = p.rounds
			rec.Interval = Interval(p.rounds, o.Confidence)
		}
		// A round stopped past the SLO is over by itself. Otherwise the pooled percentile and
		// the interval across rounds must agree: ok when both are within the SLO, over when
		// both are above it. A straddling interval, or a pooled figure on the other side of
		// the SLO from the whole interval (one round's stall dominating the pooled tail), is
		// uncertain.
		if iv := rec.Interval; iv != nil && p.run.Aborted == "" && (rec.Verdict == results.VerdictOK || rec.Verdict == results.VerdictOver) {
			limitUS := float64(o.SLO.Limit) / float64(time.Microsecond)
			switch {
			case iv.HighUS <= limitUS && p.latUS <= limitUS:
				rec.Verdict = results.VerdictOK
			case iv.LowUS > limitUS && p.latUS > limitUS:
				rec.Verdict = results.VerdictOver
			case iv.LowUS <= limitUS && iv.HighUS > limitUS:
				rec.Verdict = results.VerdictUncertain
				rec.Reason = fmt.Sprintf("%s %s–%s across %d rounds straddles the SLO's %s", o.SLO.Name,
					fmtLatency(iv.LowUS), fmtLatency(iv.HighUS), len(j.runs), fmtLatency(limitUS))
			default:
				rec.Verdict = results.VerdictUncertain
				rec.Reason = fmt.Sprintf("the pooled %s %s and the interval %s–%s across %d rounds fall on either side of the SLO's %s: a round's stall?",
					o.SLO.Name, fmtLatency(p.latUS), fmtLatency(iv.LowUS), fmtLatency(iv.HighUS), len(j.runs), fmtLatency(limitUS))
			}
		}
	}
	if j.err != nil {
		// A later round could not run at all.
		rec.Verdict, rec.Reason = results.VerdictFailed, j.err.Error()
		stop = rec.Reason
	}
	rec.Refined = j.refined
	rec.Run = j.runIdx[0]
	if len(j.runIdx) > 1 {
		rec.Runs = slices.Clone(j.runIdx)
	}
	return rec, stop
}

// below returns, for a step of s at load, the highest throughput of s's steps below that load
// (a concurrency sweep's saturation is against it) and the verdict of the step just below.
func (sw *sweeper) below(s *driverState, load float64) (best float64, prev string) {
	prevLoad := 0.0
	for _, st := range s.rec.Steps {
		if st.Load >= load {
			continue
		}
		if st.Verdict != results.VerdictIncomplete {
			best = max(best, st.ThroughputPerS)
		}
		if st.Load > prevLoad {
			prevLoad, prev = st.Load, st.Verdict
		}
	}
	return best, prev
}

// pooled is a step's rounds taken together: one account for the verdict's checks (errors,
// interrupts, saturation) and the rounds' acquire histograms merged for its percentile, so that
// the step is judged on every acquisition it measured, and each round's percentile for the
// interval.
type pooled struct {
	run    results.Run // sums (acquisitions, errors, late, dropped) and means (rates)
	latUS  float64     // the SLO percentile of the merged histogram
	p50US  float64
	rounds []float64 // each round's SLO percentile, in the order they ran
}

// pool takes runs (the rounds of one step, at least one) together.
func pool(runs []*results.Run, percentile float64) (pooled, error) {
	var p pooled
	merged := hdrhistogram.New(results.MinLatencyUS, results.MaxLatencyUS, results.SigFigs)
	p.run.Complete = true
	for i, r := range runs {
		acquire, _, _, err := r.Histograms.Decode()
		if err != nil {
			return p, fmt.Errorf("round %d: %w", i+1, err)
		}
		merged.Merge(acquire)
		p.rounds = append(p.rounds, float64(acquire.ValueAtQuantile(percentile)))
		p.run.Acquisitions += r.Acquisitions
		p.run.Errors += r.Errors
		p.run.Violations += r.Violations
		p.run.Late += r.Late
		p.run.Dropped += r.Dropped
		p.run.ThroughputPerS += r.ThroughputPerS / float64(len(runs))
		p.run.AchievedRate += r.AchievedRate / float64(len(runs))
		p.run.DurationS += r.DurationS / float64(len(runs))
		if !r.Complete {
			p.run.Complete = false
			if p.run.Incomplete == "" {
				p.run.Incomplete = r.Incomplete
			}
		}
		if r.Aborted != "" && p.run.Aborted == "" {
			p.run.Aborted, p.run.DurationS = r.Aborted, r.DurationS
		}
	}
	p.latUS = float64(merged.ValueAtQuantile(percentile))
	p.p50US = float64(merged.ValueAtQuantile(50))
	return p, nil
}
