package sweep

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lockbench/lockbench/results"
)

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
