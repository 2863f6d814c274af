package results

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	runs[0].SetClientCPU(216 * time.Millisecond)
	runs[1].SetClientCPU(155 * time.Millisecond)
	runs[1].SetDriverCounts(2000, 500, 17496) // 0.03 failed and 0.90 hand-overs per acquisition
	runs[1].SetServerStats(ServerStats{{Addr: "127.0.0.1:7000", Role: RoleMaster, Commands: CommandStats{"evalsha": {Calls: 38880}}, CPU: 97 * time.Millisecond}})
	runs[2].Complete, runs[2].Incomplete = false, "interrupted"
	runs[4].Complete, runs[4].Incomplete = false, "connection refused"
	runs[4].Errors = 64
	return runs
}

// repeatedRuns is three interleaved rounds of naive and lockcore on a
// 3-master cluster with replicas, the last lockcore round interrupted, plus
// a redsync that never measured anything.
func repeatedRuns(t *testing.T) []Run {
	var runs []Run
	nodes := func(calls [3]int64, cpu time.Duration) ServerStats {
		var s ServerStats
		for i, c := range calls {
			s = append(s,
				NodeStats{Addr: fmt.Sprintf("127.0.0.1:700%d", i), Role: RoleMaster, Commands: CommandStats{"evalsha": {Calls: c}, "info": {Calls: 2}}, CPU: cpu},
				NodeStats{Addr: fmt.Sprintf("127.0.0.1:710%d", i), Role: RoleReplica, Commands: CommandStats{"hincrby": {Calls: c / 2}}, CPU: cpu / 4})
		}
		return s
	}
	add := func(driver string, round, n int, unit time.Duration, calls [3]int64) {
		r := syntheticRun(t, driver, "contention", "cluster", 64, n, unit, time.Second)
		r.Round = round
		r.SetClientCPU(time.Duration(n) * 8 * time.Microsecond)
		r.SetServerStats(nodes(calls, time.Duration(n)*time.Microsecond))
		if driver == "lockcore" {
			r.SetDriverCounts(int64(n/4), int64(n/20*round), int64(n*3/4))
		}
		runs = append(runs, r)
	}
	// Rotated order per round, as lockbench run --repeat runs them.
	add("naive", 1, 12000, 20*time.Microsecond, [3]int64{11000, 12500, 12500})
	add("lockcore", 1, 19000, 12*time.Microsecond, [3]int64{12000, 13000, 13000})
	add("lockcore", 2, 20000, 11*time.Microsecond, [3]int64{13000, 13500, 13500})
	add("naive", 2, 11000, 21*time.Microsecond, [3]int64{10000, 11500, 11500})
	add("naive", 3, 12500, 19*time.Microsecond, [3]int64{12000, 12500, 13000})
	add("lockcore", 3, 9000, 13*time.Microsecond, [3]int64{6000, 6000, 6000})
	runs[len(runs)-1].Complete, runs[len(runs)-1].Incomplete = false, "interrupted after 0.5s of 1s"
	for round := 1; round <= 3; round++ {
		r := syntheticRun(t, "redsync", "contention", "cluster", 64, 0, time.Microsecond, 0)
		r.Round, r.Complete, r.Incomplete, r.Errors = round, false, "connection refused", 64
		runs = append(runs, r)
	}
	return runs
}

func TestWriteSummaryGolden(t *testing.T) {
	t.Run("single runs", func(t *testing.T) {
		var buf bytes.Buffer
		if err := WriteSummary(&buf, syntheticRuns(t)); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "summary.golden", buf.Bytes())
	})
	t.Run("repeated runs", func(t *testing.T) {
		var buf bytes.Buffer
		if err := WriteSummaryBaseline(&buf, repeatedRuns(t), "naive"); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "summary_repeat.golden", buf.Bytes())
	})
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("summary differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, got, want)
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

// TestWriteSummaryWaiting checks the pub/sub waiting table: counted drivers with their figures,
// a polling driver as "-", and no table when no run counted.
func TestWriteSummaryWaiting(t *testing.T) {
	runs := []Run{
		{Driver: "redisson", Workload: "contention", Topology: "single", Concurrency: 2000, Keys: 1000, Acquisitions: 400},
		{Driver: "naive", Workload: "contention", Topology: "single", Concurrency: 2000, Keys: 1000, Acquisitions: 100},
	}
	var plain bytes.Buffer
	if err := WriteSummary(&plain, runs); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain.Bytes(), []byte("waiting on pub/sub")) {
		t.Errorf("waiting table without any run that counted:\n%s", plain.Bytes())
	}
	// A driver that counts but never subscribed (lockcore in one process): no table of zeros.
	runs[0].SetWaiting(WaitCounts{})
	plain.Reset()
	if err := WriteSummary(&plain, runs); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain.Bytes(), []byte("waiting on pub/sub")) {
		t.Errorf("waiting table though no run subscribed:\n%s", plain.Bytes())
	}
	runs[0].SetWaiting(WaitCounts{Subscribes: 100, Unsubscribes: 96, PeakChannels: 250, ChannelsAfter: 4, WokenByMessage: 300, EndedWithoutWake: 7, SubscribeTimeouts: 12})
	var buf bytes.Buffer
	if err := WriteSummary(&buf, runs); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	_, table, ok := strings.Cut(out, "waiting on pub/sub")
	if !ok {
		t.Fatalf("no waiting table:\n%s", out)
	}
	for _, want := range []string{"0.250     0.240       250            300    7       12                  4", "naive     single    2000  1000  -"} {
		if !strings.Contains(table, want) {
			t.Errorf("waiting table lacks %q:\n%s", want, table)
		}
	}
}

// TestWriteSummaryWaitingRepeated checks that repeated runs give one waiting row per driver and
// case, as the median table does, not one unlabelled row per round: medians of the
// per-acquisition figures, the largest peak and leftover channels, the event counts summed.
func TestWriteSummaryWaitingRepeated(t *testing.T) {
	var runs []Run
	for round, subs := range []int64{100, 300, 200} {
		r := Run{Driver: "redisson", Workload: "contention", Topology: "single", Concurrency: 2000, Keys: 1000, Acquisitions: 1000, Round: round + 1}
		r.SetWaiting(WaitCounts{Subscribes: subs, Unsubscribes: subs, PeakChannels: 240 + int64(round)*5, ChannelsAfter: int64(2 - round),
			WokenByMessage: 10, EndedWithoutWake: 1, SubscribeTimeouts: int64(round)})
		runs = append(runs, r, Run{Driver: "naive", Workload: "contention", Topology: "single", Concurrency: 2000, Keys: 1000, Acquisitions: 500, Round: round + 1})
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, runs); err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(buf.String(), "waiting on pub/sub")
	if !ok {
		t.Fatalf("no waiting table:\n%s", buf.String())
	}
	table, _, _ = strings.Cut(table, "\n\n")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	// The title's tail, the note on how rounds combine, the header and one row per driver.
	if len(lines) != 5 {
		t.Fatalf("waiting table has %d lines, want 5 (one row per driver):\n%s", len(lines), table)
	}
	for _, want := range []string{
		"redisson  single    2000  1000  3       0.200     0.200       250            30     3       3                   2",
		"naive     single    2000  1000  3       -         -",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("waiting table lacks %q:\n%s", want, table)
		}
	}
}

// TestSummaryStatesTheFloor checks the line that sets each driver's Redis CPU per acquisition
// against the floor driver's of the same run: there when the floor ran, absent when it did not.
func TestSummaryStatesTheFloor(t *testing.T) {
	run := func(driver string, redisUS float64) Run {
		return Run{Driver: driver, Workload: "contention", Topology: "single", Concurrency: 64, Keys: 10000, Complete: true,
			DurationS: 1, Acquisitions: 1000, ThroughputPerS: 1000, ServerCPUPerAcquisitionUS: redisUS}
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, []Run{run("lockcore", 6), run("floor", 4), run("naive", 12)}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Redis CPU per acquisition against the floor (SET NX PX + DEL, 4.0µs, same run):", "lockcore: 1.50x the floor (6.0µs)", "naive: 3.00x the floor (12µs)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	if err := WriteSummary(&buf, []Run{run("lockcore", 6), run("naive", 12)}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "the floor") {
		t.Errorf("a summary without the floor mentions it:\n%s", buf.String())
	}
}
