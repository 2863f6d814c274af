package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
)

var proxiesLine = regexp.MustCompile(`network: (\d+) client connections went through (\d+) proxies`)

// Bad --net specs are refused before anything starts, by every command that takes run's flags.
func TestNetBadSpec(t *testing.T) {
	t.Parallel()
	cases := []struct{ spec, out string }{
		{"", "--net: empty"},
		{"latency", "--net: \"latency\": want key=value"},
		{"latency=1", "--net: latency=1: want a duration"},
		{"latency=1ms,jitter=2ms", "--net: jitter 2ms is more than latency 1ms"},
		{"loss=1%", `--net: unknown key "loss"`},
		{"jitter=1ms", "has no latency"},
	}
	for _, cmd := range []string{"run", "sweep"} {
		for _, tc := range cases {
			var out, errb bytes.Buffer
			code := dispatch([]string{cmd, "--net", tc.spec}, &out, &errb)
			if code != exitUsage || !strings.Contains(errb.String(), tc.out) || strings.Contains(errb.String(), "starting") {
				t.Errorf("lockbench %s --net %q: exit %d, stderr %q; want exit %d containing %q", cmd, tc.spec, code, errb.String(), exitUsage, tc.out)
			}
		}
	}
	var out, errb bytes.Buffer
	if code := dispatch([]string{"run", "--help"}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "--net") {
		t.Errorf("run --help: exit %d, no --net in:\n%s", code, out.String())
	}
}

// With --net latency=1ms every round trip gains 2ms, so on an attached server a naive cycle (SET
// NX, then the unlock script: two round trips) takes at least 4ms, and on a sentinel deployment
// lockbench started, where the clients find the master through the sentinels, an acquisition
// takes at least one round trip's 2ms. Lower bounds: they show the conditions are applied to the
// connections that carry the locks. The result and the summary record the conditions.
func TestRunWithNet(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	for _, tc := range []struct {
		name       string
		args       []string
		cycleMin   time.Duration // lower bound of the cycle p50
		acquireMin time.Duration // lower bound of the acquire p50
		proxies    int           // at least: the server; the master and a sentinel
	}{
		{"attached single", []string{"--addr", srv.Addr()}, 4 * time.Millisecond, 2 * time.Millisecond, 1},
		{"sentinel", []string{"--topology", "sentinel"}, 4 * time.Millisecond, 2 * time.Millisecond, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			errb := &syncBuffer{}
			args := append([]string{"run", "--net", "latency=1ms", "--driver", "naive", "--concurrency", "1", "--keys", "1",
				"--duration", "500ms", "--warmup", "100ms", "--out", dir}, tc.args...)
			code, out := finish(t, lockbench(t, errb, args...), errb)
			if code != exitOK {
				t.Fatalf("exit %d\nstderr:\n%s", code, errb)
			}
			if !strings.Contains(out, "network between clients and Redis: latency=1ms") {
				t.Errorf("summary does not say the network conditions:\n%s", out)
			}
			m := proxiesLine.FindStringSubmatch(errb.String())
			if m == nil {
				t.Fatalf("stderr does not count the proxied connections:\n%s", errb)
			}
			if dials, _ := strconv.Atoi(m[1]); dials < 1 {
				t.Errorf("%s connections through the proxies", m[1])
			}
			if proxies, _ := strconv.Atoi(m[2]); proxies < tc.proxies {
				t.Errorf("%s proxies, want at least %d", m[2], tc.proxies)
			}
			f := readResult(t, dir)
			if len(f.Runs) != 1 {
				t.Fatalf("%d runs, want 1", len(f.Runs))
			}
			r := f.Runs[0]
			if r.Net != "latency=1ms" || r.Case().Get("net") != "latency=1ms" {
				t.Errorf("run records net %q, case %v", r.Net, r.Case())
			}
			if r.Acquisitions == 0 || r.Errors != 0 || r.Violations != 0 {
				t.Fatalf("%d acquisitions, %d errors %v, %d violations", r.Acquisitions, r.Errors, r.ErrorsByKind, r.Violations)
			}
			us := func(d time.Duration) float64 { return float64(d.Microseconds()) }
			if r.AcquireLatencyUS.P50 < us(tc.acquireMin) || r.CycleLatencyUS.P50 < us(tc.cycleMin) {
				t.Errorf("acquire p50 %vus, cycle p50 %vus; want at least %v and %v with 1ms each way",
					r.AcquireLatencyUS.P50, r.CycleLatencyUS.P50, tc.acquireMin, tc.cycleMin)
			}
		})
	}
}

func TestNetProcBadInput(t *testing.T) {
	cases := []struct {
		args []string
		out  string
	}{
		{[]string{"run", "--net-proc", "1:latency=5ms"}, "give --procs 2 or more"},
		{[]string{"run", "--procs", "2", "--net-proc", "latency=5ms"}, "want INDEX:SPEC"},
		{[]string{"run", "--procs", "2", "--net-proc", "2:latency=5ms"}, "process 2, want 0 to 1"},
		{[]string{"run", "--procs", "2", "--net-proc", "1:latency=5ms", "--net-proc", "1:latency=1ms"}, "process 1 given twice"},
		{[]string{"run", "--procs", "2", "--net-proc", "1:latency=fast"}, `--net-proc "1:latency=fast"`},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := dispatch(tc.args, &out, &errb)
		if all := out.String() + errb.String(); code != exitUsage || !strings.Contains(all, tc.out) {
			t.Errorf("lockbench %q: exit %d, output %q; want exit %d containing %q", tc.args, code, all, exitUsage, tc.out)
		}
	}
}
