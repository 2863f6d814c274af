package sweep

import (
	"bytes"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// The plans lockbench sweep --dry-run printed for these flags before WritePlan moved here:
// the text is the command's output, so it is compared whole.
func TestWritePlan(t *testing.T) {
	t.Parallel()
	rates := []float64{5000, 10000, 20000, 40000, 80000, 160000}
	cases := []struct {
		name   string
		o      Options
		warmup time.Duration
		want   string
	}{
		{"rates with floor and budget", Options{Mode: results.SweepRate, Loads: rates, Drivers: []string{"lockcore", "naive"},
			SLO: mustSLO(t, "p99=2ms"), Rounds: 3, MaxRounds: 6, Precision: 0.05, Budget: 10 * time.Minute, FloorShare: 0.05,
			StepTime: StepTime(time.Second, 3*time.Second), Duration: 3 * time.Second}, time.Second,
			`sweep over rate: 5000, 10000, 20000, 40000, 80000, 160000 acquisitions/s (open loop)
drivers, interleaved: lockcore, naive
SLO: acquire p99=2ms
each run: warm-up 1s, measuring 3s (about 5s with set-up)
noise floor: one run per driver at 5% of the first rate
round trip: PINGs one at a time, back to back (up to 5000 or 3s), then paced at 250, 5000, 10000, 20000/s (up to 2000 or 3s each): at most 7s
rounds: 3 per step, up to 6 while uncertain
refinement: bisect each knee's bracket to within 5%, at most 10m0s
time: about 5m17s if every step is decided in its first rounds and no driver stops early, at most 10m17s (2 noise-floor runs, round-trip probes 7s, 36 to 72 grid runs, up to 4 refined steps per driver (48 runs, 4m0s, bounded by the budget))
`},
		// --warmup 0s reaches the options as -1 (none); a closed loop has no noise floor.
		{"workers without refinement", Options{Mode: results.SweepConcurrency, Loads: []float64{1, 2, 4}, Drivers: []string{"naive", "lockcore"},
			SLO: mustSLO(t, "p99=5ms"), Rounds: 3, MaxRounds: 6, Budget: 10 * time.Minute, FloorShare: 0.05,
			StepTime: StepTime(-1, 10*time.Second), Duration: 10 * time.Second}, -1,
			`sweep over concurrency: 1, 2, 4 workers (closed loop)
drivers, interleaved: naive, lockcore
SLO: acquire p99=5ms
each run: warm-up 0s, measuring 10s (about 11s with set-up)
rounds: 3 per step, up to 6 while uncertain
time: about 3m18s if every step is decided in its first rounds and no driver stops early, at most 6m36s (18 to 36 grid runs)
`},
		// Zero rounds read as one, as Run reads them.
		{"one round, no budget", Options{Mode: results.SweepRate, Loads: []float64{100, 200}, Drivers: []string{"naive", "lockcore"},
			SLO: mustSLO(t, "p99=5ms"), Precision: 0.05, StepTime: StepTime(2*time.Second, 10*time.Second), Duration: 10 * time.Second}, 2 * time.Second,
			`sweep over rate: 100, 200 acquisitions/s (open loop)
drivers, interleaved: naive, lockcore
SLO: acquire p99=5ms
each run: warm-up 2s, measuring 10s (about 13s with set-up)
rounds: 1 per step, up to 1 while uncertain
refinement: bisect each knee's bracket to within 5%, no time bound
time: about 2m36s if every step is decided in its first rounds and no driver stops early, at most 2m36s (4 to 4 grid runs, up to 4 refined steps per driver (8 runs, 1m44s, bounded by the budget))
`},
		{"workers, uneven gaps", Options{Mode: results.SweepConcurrency, Loads: []float64{1, 2, 3, 50}, Drivers: []string{"naive", "lockcore"},
			SLO: mustSLO(t, "p99=5ms"), Rounds: 2, MaxRounds: 5, Precision: 0.05, StepTime: StepTime(2*time.Second, 10*time.Second), Duration: 10 * time.Second}, 2 * time.Second,
			`sweep over concurrency: 1, 2, 3, 50 workers (closed loop)
drivers, interleaved: naive, lockcore
SLO: acquire p99=5ms
each run: warm-up 2s, measuring 10s (about 13s with set-up)
rounds: 2 per step, up to 5 while uncertain
refinement: bisect each knee's bracket to within 5%, no time bound
time: about 8m40s if every step is decided in its first rounds and no driver stops early, at most 21m40s (16 to 40 grid runs, up to 6 refined steps per driver (60 runs, 13m0s, bounded by the budget))
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			if err := WritePlan(&buf, tc.o, tc.warmup); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tc.want {
				t.Errorf("plan:\n%s\nwant:\n%s", buf.String(), tc.want)
			}
			if line := "time: " + PlanTime(tc.o).Describe() + "\n"; !bytes.HasSuffix(buf.Bytes(), []byte(line)) {
				t.Errorf("the plan's last line is not Describe's %q", line)
			}
		})
	}
}

func TestStepTime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ warmup, duration, want time.Duration }{
		{2 * time.Second, 10 * time.Second, 13 * time.Second},
		{0, 3 * time.Second, 4 * time.Second},
		{-1, 3 * time.Second, 4 * time.Second}, // no warm-up
	} {
		if got := StepTime(tc.warmup, tc.duration); got != tc.want {
			t.Errorf("StepTime(%v, %v) = %v, want %v", tc.warmup, tc.duration, got, tc.want)
		}
	}
}
