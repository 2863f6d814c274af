package report

import (
	"math"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
	"gonum.org/v1/plot"
)

// TestLegendRoomLogBoundedByData: the room made for a legend on a log latency axis ends
// within maxLegendDecades of the data's maximum, however many entries and decades there are.
// Before the bound, ten entries over data from 20µs to 20ms put the top at about 630 s.
func TestLegendRoomLogBoundedByData(t *testing.T) {
	for _, tc := range []struct {
		name     string
		min, max float64 // µs
		entries  int
	}{
		{"one entry, narrow", 100, 300, 1},
		{"ten entries, three decades", 20, 20000, 10},
		{"sweep legend, five decades", 1, 1e5, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plot.New()
			p.Y.Scale = plot.LogScale{}
			p.Y.Min, p.Y.Max = tc.min, tc.max
			legendRoom(p, tc.entries, true)
			if limit := tc.max * math.Pow10(maxLegendDecades); p.Y.Max > limit*(1+1e-12) {
				t.Errorf("axis top %gµs, want at most %gµs (data max %gµs)", p.Y.Max, limit, tc.max)
			}
			if p.Y.Max <= tc.max {
				t.Errorf("axis top %gµs leaves no room above the data max %gµs", p.Y.Max, tc.max)
			}
		})
	}
}

// TestLatencyAxesBoundedByData builds reports from result files whose latencies end in
// milliseconds and checks every log latency axis ends within maxLegendDecades of the slowest
// latency recorded (or the SLO line, if higher).
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
				if limit := dataMax * 1.001 * math.Pow10(maxLegendDecades); c.plot.Y.Max > limit {
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
