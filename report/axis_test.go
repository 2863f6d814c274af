package report

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
	"gonum.org/v1/plot"
)

// TestLatencyAxesBoundedByData builds reports from result files whose latencies end in
// milliseconds and checks every log latency axis ends within a factor of 2 of the slowest
// latency recorded (or the SLO line, if higher): the legends sit beside the plot, so no room
// is made for them above the data (which once took the axis up to 100 s).
func TestLatencyAxesBoundedByData(t *testing.T) {
	var many []results.Run // ten runs: ten legend entries on the p99 timeline
	for round := 1; round <= 5; round++ {
		many = append(many,
			fakeRun(t, runSpec{driver: "lockcore", round: round, n: 400, median: 30 * time.Microsecond, tput: 40000, timeline: true, seed: uint64(round), complete: true}),
			fakeRun(t, runSpec{driver: "naive", round: round, n: 400, median: 2 * time.Millisecond, tput: 9000, timeline: true, seed: uint64(20 + round), complete: true}))
	}
	manyFile := newFile(many...)
	manyFile.Repeat = 5
	slo := results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 2000}
	for _, tc := range []struct {
		name  string
		file  *results.File
		limit float64 // an SLO line drawn on the chart, µs
	}{
		{"ten timelines", manyFile, 0},
		{"sweep", sweepFile(t, slo), slo.LimitUS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := roundTrip(t, tc.file)
			dataMax := tc.limit
			for _, r := range src.File.Runs {
				dataMax = max(dataMax, r.AcquireLatencyUS.Max)
			}
			r, err := Build([]Source{src}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, c := range r.Charts {
				if _, log := c.plot.Y.Scale.(plot.LogScale); !log {
					continue
				}
				checked++
				// HDR buckets round a recorded value up by at most 1 part in 10^3.
				if limit := dataMax * 1.001 * 2; c.plot.Y.Max > limit {
					t.Errorf("%s: latency axis ends at %s, data at most %s: want at most %s",
						c.ID, formatLatencyTick(c.plot.Y.Max), formatLatencyTick(dataMax), formatLatencyTick(limit))
				}
			}
			if checked == 0 {
				t.Fatal("no chart with a log latency axis")
			}
		})
	}
}
