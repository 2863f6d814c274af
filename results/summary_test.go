package results

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// syntheticRun returns a filled run with n acquisitions whose latencies are
// a deterministic spread of multiples of unit with a slow tail.
func syntheticRun(t *testing.T, driver, workload, topology string, conc, n int, unit, elapsed time.Duration) Run {
	t.Helper()
	rec := NewRecorder()
	for i := range n {
		acquire := unit * time.Duration(1+i%97)
		if i%500 == 0 {
			acquire *= 20
		}
		release := unit / 2 * time.Duration(1+i%13)
		rec.Record(acquire, release, acquire+release+unit)
	}
	r := Run{Driver: driver, Workload: workload, Topology: topology, Concurrency: conc, Keys: 10000, Complete: true}
	if err := r.Fill(Merge(rec), elapsed); err != nil {
		t.Fatal(err)
	}
	r.SetCommands(CommandStats{"evalsha": {Calls: 2 * int64(n)}, "hincrby": {Calls: int64(n)}, "info": {Calls: 1}})
	return r
}

func syntheticRuns(t *testing.T) []Run {
	runs := []Run{
		syntheticRun(t, "naive", "contention", "single", 64, 12000, 20*time.Microsecond, 10*time.Second),
		syntheticRun(t, "lockcore", "contention", "single", 64, 19440, 12*time.Microsecond, 10*time.Second),
		syntheticRun(t, "lockcore", "contention", "cluster", 64, 3000, 15*time.Microsecond, 2500*time.Millisecond),
		syntheticRun(t, "lockcore", "slow", "single", 8, 40, 30*time.Millisecond, 20*time.Second),
		syntheticRun(t, "redsync", "contention", "sentinel", 64, 0, time.Microsecond, 0),
	}
	runs[0].Violations = 7
	runs[2].Complete, runs[2].Incomplete = false, "interrupted"
	runs[4].Complete, runs[4].Incomplete = false, "connection refused"
	runs[4].Errors = 64
	return runs
}

func TestWriteSummaryGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummary(&buf, syntheticRuns(t)); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "summary.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("summary differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, buf.Bytes(), want)
	}
}

func TestWriteSummaryNoRatios(t *testing.T) {
	runs := []Run{{Driver: "a", Workload: "x", ThroughputPerS: 10}, {Driver: "b", Workload: "y", ThroughputPerS: 20}}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, runs); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte("throughput")) {
		t.Errorf("ratio printed for runs of different workloads:\n%s", buf.Bytes())
	}
}

func TestLatency(t *testing.T) {
	tests := []struct {
		us   float64
		want string
	}{
		{0, "-"},
		{1, "1µs"},
		{412, "412µs"},
		{999.4, "999µs"},
		{999.5, "1.00ms"},
		{1270, "1.27ms"},
		{9994, "9.99ms"},
		{9995, "10.0ms"},
		{12_345, "12.3ms"},
		{99_950, "100ms"},
		{412_000, "412ms"},
		{999_499, "999ms"},
		{999_500, "1.0s"},
		{2_000_000, "2.0s"},
		{60_000_000, "60.0s"},
	}
	for _, tt := range tests {
		if got := latency(tt.us); got != tt.want {
			t.Errorf("latency(%v) = %q, want %q", tt.us, got, tt.want)
		}
	}
}
