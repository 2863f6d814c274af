package main

import (
	"bytes"
	"strings"
	"testing"
)

// An open-loop run end to end: the result file says which pacing ran, at what rate, with the
// service time beside the latency from the intended start, and the summary shows it.
func TestRunOpenLoopEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore,naive", "--concurrency", "64", "--keys", "100",
		"--rate", "300", "--arrival", "poisson", "--duration", "1s", "--warmup", "200ms", "--out", dir)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lockbench run: %v\nstderr:\n%s", err, errb)
	}
	out := cmd.Stdout.(*bytes.Buffer).String()
	for _, want := range []string{"open loop (", "poisson", "target/s", "service p99"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	f := readResult(t, dir)
	if len(f.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(f.Runs))
	}
	for _, r := range f.Runs {
		if r.Pacing != "open" || r.Arrival != "poisson" || r.TargetRate != 300 || r.AchievedRate <= 0 ||
			r.ServiceLatencyUS == nil || r.Histograms.Service == "" || r.Acquisitions == 0 || r.Violations != 0 {
			t.Errorf("%s: pacing %q arrival %q target %v achieved %v service %v acquisitions %d violations %d",
				r.Driver, r.Pacing, r.Arrival, r.TargetRate, r.AchievedRate, r.ServiceLatencyUS, r.Acquisitions, r.Violations)
		}
		if c := r.Case(); c.Get("target_rate") != "300" || c.Get("arrival") != "poisson" {
			t.Errorf("%s: case %s lacks the rate", r.Driver, c)
		}
	}
	assertServerGone(t, errb.String())
}
