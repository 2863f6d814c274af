package results

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// benchLine matches a Go benchmark result line as golang.org/x/perf/benchfmt
// reads it: a name without spaces, an iteration count, then value-unit pairs.
// The module is not a dependency, so the format is checked here instead.
var benchLine = regexp.MustCompile(`^Benchmark[^\s]+\s+[1-9][0-9]*(\t[-+0-9.eE]+ [^\s]+)+$`)

func TestWriteBenchfmt(t *testing.T) {
	runs := syntheticRuns(t)
	runs = append(runs,
		Run{Driver: "go-redis/redsync", Workload: "mix 80/20", Topology: "", Acquisitions: 10, DurationS: 1, ThroughputPerS: 10},
		Run{Driver: "redsync", Workload: "contention", Topology: "masters", TopologySpec: "masters:5", Acquisitions: 10, DurationS: 1, ThroughputPerS: 10},
		Run{Driver: "lockcore", Workload: "rw", Topology: "single", Acquisitions: 10, DurationS: 1, ThroughputPerS: 10, MaxConcurrentReaders: 6})
	var buf bytes.Buffer
	if err := WriteBenchfmt(&buf, runs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(runs) {
		t.Fatalf("%d lines for %d runs:\n%s", len(lines), len(runs), buf.String())
	}
	for i, line := range lines {
		if runs[i].Acquisitions == 0 {
			if !strings.HasPrefix(line, "# BenchmarkLock/") || !strings.Contains(line, "connection refused") {
				t.Errorf("line %d: %q, want a comment saying why the run is skipped", i, line)
			}
			continue
		}
		if !benchLine.MatchString(line) {
			t.Errorf("line %d is not in benchmark format: %q", i, line)
		}
	}
	for _, want := range []string{
		"BenchmarkLock/workload=contention/driver=naive/topology=single/conc=64/keys=10000/key_dist=none/hold_us=0 \t12000\t833333.3 ns/op\t1200.0 acq/s\t",
		"\t3.000 cmds/acq\t7 violations\t18.000 client-us/acq\n",
		"\t2.000 cmds/acq\t0 violations\t7.973 client-us/acq\t4.990 redis-us/acq\n",
		"\t3.000 cmds/acq\t0 violations\n", // CPU not measured: no CPU units
		"BenchmarkLock/workload=contention/driver=redsync/topology=masters:5/conc=0/keys=0/key_dist=none/hold_us=0 \t10\t",
		"BenchmarkLock/workload=mix_80_20/driver=go-redis_redsync/topology=none/conc=0/keys=0/key_dist=none/hold_us=0 \t10\t100000000.0 ns/op",
		"BenchmarkLock/workload=rw/driver=lockcore/topology=single/conc=0/keys=0/key_dist=none/hold_us=0 \t10\t", // then:
		"\t0 violations\t6 max-readers\n",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
	if n := strings.Count(buf.String(), "max-readers"); n != 1 {
		t.Errorf("max-readers on %d lines, want only the rw run's:\n%s", n, buf.String())
	}
}
