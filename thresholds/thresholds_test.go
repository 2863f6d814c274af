package thresholds

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

func TestParse(t *testing.T) {
	good := []struct {
		expr         string
		driver, base string
		metric       string
		op           Op
		limit        float64
	}{
		{"p99<5ms", "", "", "p99", Less, 5000},
		{" p99 < 800us ", "", "", "p99", Less, 800},
		{"p999<=1.5ms", "", "", "p999", LessEqual, 1500},
		{"p50<250µs", "", "", "p50", Less, 250},
		{"throughput>20000", "", "", "throughput", Greater, 20000},
		{"acq/s>=1e4", "", "", "throughput", GreaterEqual, 10000},
		{"violations==0", "", "", "violations", Equal, 0},
		{"errors!=3", "", "", "errors", NotEqual, 3},
		{"lockcore p99<2ms", "lockcore", "", "p99", Less, 2000},
		{"lockcore/naive throughput>=1.5", "lockcore", "naive", "throughput", GreaterEqual, 1.5},
		{"lockcore/redisson throughput >= 2x", "lockcore", "redisson", "throughput", GreaterEqual, 2},
		{"lockcore/naive p99<=0.5", "lockcore", "naive", "p99", LessEqual, 0.5},
		{"lockcore/naive cmds<3", "lockcore", "naive", "cmds", Less, 3},
	}
	for _, g := range good {
		th, err := Parse(g.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", g.expr, err)
			continue
		}
		if th.Driver != g.driver || th.Base != g.base || th.Metric.Name != g.metric || th.Op != g.op || th.Limit != g.limit {
			t.Errorf("Parse(%q) = driver %q base %q metric %s op %s limit %v; want %+v", g.expr, th.Driver, th.Base, th.Metric.Name, th.Op, th.Limit, g)
		}
	}
	bad := []struct{ expr, want string }{
		{"p98<5ms", `unknown metric "p98"`},
		{"latency<5ms", `unknown metric "latency"`},
		{"p99<5", "needs its unit"},
		{"p99<fast", "not a duration"},
		{"throughput>lots", `"lots" is not a number`},
		{"throughput>", "no value"},
		{"throughput 20000", "no operator"},
		{"throughput=>20000", "unknown operator"},
		{"<5ms", "no metric"},
		{"a b c p99<5ms", "want [DRIVER[/BASE] ]METRIC"},
		{"lockcore/ throughput>1", "want DRIVER or DRIVER/BASE"},
		{"a/b/c throughput>1", "want DRIVER or DRIVER/BASE"},
		{"naive/naive throughput>1", "to itself"},
		{"lockcore/naive throughput>=NaN", "not a number"},
	}
	for _, b := range bad {
		_, err := Parse(b.expr)
		if !errors.Is(err, ErrBadThreshold) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Parse(%q) = %v; want an ErrBadThreshold containing %q", b.expr, err, b.want)
		}
	}
}

func run(driver string, round int, tput, p99 float64) results.Run {
	return results.Run{Driver: driver, Round: round, Workload: "contention", Topology: "single", Concurrency: 8, Keys: 100,
		Acquisitions: int64(tput), ThroughputPerS: tput, AcquireLatencyUS: results.Percentiles{P99: p99}, Complete: true}
}

func mustParse(t *testing.T, exprs ...string) []Threshold {
	t.Helper()
	var out []Threshold
	for _, e := range exprs {
		th, err := Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, th)
	}
	return out
}

func TestCheck(t *testing.T) {
	runs := []results.Run{
		// Round 2 ran on a machine twice as loaded: both drivers halve, their ratio holds.
		run("lockcore", 1, 9000, 800), run("naive", 1, 4000, 4000),
		run("naive", 2, 2000, 9000), run("lockcore", 2, 4400, 1500),
		run("lockcore", 3, 8800, 900), run("naive", 3, 4100, 4200),
	}
	runs[3].Violations = 1
	ths := mustParse(t,
		"lockcore/naive throughput>=2",   // per round 2.25, 2.2, 2.146: median 2.2
		"lockcore/naive throughput>=2.3", // fails
		"naive/lockcore p99>=4",          // 5, 6, 4.67: median 5
		"p99<5ms",                        // naive's median 4.2ms, lockcore's 900µs
		"throughput>5000",                // naive fails
		"lockcore violations==0",         // 1 in round 2
		"naive violations==0",
		"lockcore/redsync throughput>1", // redsync did not run
		"redsync p99<1s",                // matches nothing
		"client-cpu<10us",               // not measured
	)
	rs := Check(ths, runs)
	type want struct {
		pass   bool
		values []float64
	}
	wants := []want{
		{true, []float64{9000.0/4000*0 + 2.2}},
		{false, []float64{2.2}},
		{true, []float64{5}},
		{true, []float64{900, 4200}},
		{false, []float64{8800, 4000}},
		{false, []float64{1}},
		{true, []float64{0}},
		{false, []float64{0}},
		{false, nil},
		{false, []float64{0, 0}},
	}
	for i, w := range wants {
		r := rs[i]
		if r.Pass() != w.pass || len(r.Outcomes) != len(w.values) {
			t.Errorf("%s: pass %v with %d outcomes %+v; want pass %v with %d", r.Threshold.Expr, r.Pass(), len(r.Outcomes), r.Outcomes, w.pass, len(w.values))
			continue
		}
		for j, v := range w.values {
			if got := r.Outcomes[j].Value; got < v-1e-9 || got > v+1e-9 {
				t.Errorf("%s: outcome %d (%s) = %v, want %v", r.Threshold.Expr, j, r.Outcomes[j].Subject, got, v)
			}
		}
	}
	if n := Failed(rs); n != 6 {
		t.Errorf("Failed = %d, want 6", n)
	}
	var buf bytes.Buffer
	if err := WriteReport(&buf, rs); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, s := range []string{
		"thresholds: 4 of 10 passed",
		"  ok    lockcore/naive throughput>=2: lockcore/naive 2.20x (median of 3 per-round ratios)",
		"  FAIL  throughput>5000: naive 4000",
		"  ok    p99<5ms: naive 4.20ms",
		"  FAIL  lockcore/redsync throughput>1: lockcore/redsync - (redsync did not run this case)",
		"  FAIL  redsync p99<1s: matched no run",
		"  FAIL  client-cpu<10us: lockcore - (not measured)",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
}

// TestCheckSeveralCases: with several cases in the runs, a threshold is checked per case and
// the case is named.
func TestCheckSeveralCases(t *testing.T) {
	a, b := run("lockcore", 1, 100, 1), run("lockcore", 1, 50, 1)
	b.Concurrency = 64
	rs := Check(mustParse(t, "throughput>60"), []results.Run{a, b})
	if len(rs[0].Outcomes) != 2 || rs[0].Pass() || !strings.Contains(rs[0].Outcomes[1].Subject, "concurrency=64") {
		t.Errorf("outcomes %+v", rs[0].Outcomes)
	}
}

func TestLive(t *testing.T) {
	parse := func(exprs ...string) []Threshold {
		var out []Threshold
		for _, e := range exprs {
			th, err := Parse(e)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, th)
		}
		return out
	}
	run := &results.Run{Driver: "lockcore", DurationS: 2, Acquisitions: 1000, ThroughputPerS: 500,
		AcquireLatencyUS: results.Percentiles{P99: 7210}, Violations: 0}
	for _, c := range []struct {
		exprs []string
		want  string
	}{
		{[]string{"p99<10ms", "violations==0"}, ""},
		{[]string{"violations==0", "p99<5ms"}, "p99<5ms failed: p99 7.21ms after 2.0s"},
		{[]string{"naive p99<5ms"}, ""},                // another driver's
		{[]string{"lockcore/naive throughput>=2"}, ""}, // a ratio: checked at the end only
		{[]string{"cmds<5", "acquisitions>5000"}, ""},  // read at the end only
		{[]string{"throughput>=1000"}, "throughput>=1000 failed: throughput 500 after 2.0s"},
	} {
		if got := Live(parse(c.exprs...), "lockcore", run); got != c.want {
			t.Errorf("%v: %q, want %q", c.exprs, got, c.want)
		}
	}
	if got := Live(parse("p99<5ms"), "lockcore", &results.Run{Driver: "lockcore", DurationS: 1}); got != "" {
		t.Errorf("no acquisition yet: %q, want nothing failed", got)
	}
	if th := parse("lockcore/naive throughput>=2")[0]; th.CanAbort() {
		t.Error("a ratio cannot abort")
	}
}
