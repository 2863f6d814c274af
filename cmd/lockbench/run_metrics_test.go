package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// TestMetricsAndAbortMisuse: bad --metrics-addr and --abort-on-fail settings are bad input
// (exit 2), refused before anything is started or measured.
func TestMetricsAndAbortMisuse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--metrics-addr", ":9464"}, "no host, so it would listen on every interface"},
		{[]string{"run", "--metrics-addr", "9464"}, "want HOST:PORT"},
		{[]string{"run", "--metrics-addr", taken.Addr().String()}, "the port is in use"},
		{[]string{"sweep", "--metrics-addr", taken.Addr().String()}, "the port is in use"},
		{[]string{"run", "--metrics-linger", "1s"}, "--metrics-linger needs --metrics-addr"},
		{[]string{"run", "--procs", "2", "--metrics-addr", "127.0.0.1:0"}, "port 0 picks a port at random"},
		{[]string{"run", "--abort-on-fail"}, "--abort-on-fail needs a --threshold"},
		{[]string{"run", "--abort-after", "2s", "--threshold", "p99<5ms"}, "--abort-after needs --abort-on-fail"},
		{[]string{"run", "--abort-on-fail", "--driver", "lockcore,naive", "--threshold", "lockcore/naive throughput>=1"}, "none of the --threshold can be checked while measuring"},
		{[]string{"run", "--abort-on-fail", "--threshold", "p99<5ms", "--procs", "2"}, "not available with --procs"},
		{[]string{"worker", "--abort-on-fail", "--addr", "127.0.0.1:1", "--driver", "lockcore"}, "unknown flag: --abort-on-fail"},
	} {
		var out, errb bytes.Buffer
		code := dispatch(c.args, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) || strings.Contains(errb.String(), "redis-server pid") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q, before starting Redis", c.args, code, errb.String(), c.want)
		}
	}
	// 0.0.0.0 is allowed (with a warning when served: bench's TestServeMetricsWarnsOnEveryInterface);
	// the flags parse.
	if _, code, ok := parseRunFlags([]string{"--metrics-addr", "0.0.0.0:9464"}, io.Discard, io.Discard); !ok || code != exitOK {
		t.Errorf("0.0.0.0: ok %v, code %d", ok, code)
	}
}

// TestAbortOnFail: a threshold no run can meet stops the first run after --abort-after,
// writes its partial result, starts no further run and exits 3.
func TestAbortOnFail(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	errb := &syncBuffer{}
	began := time.Now()
	cmd := lockbench(t, errb, "run", "--driver", "lockcore", "--repeat", "2", "--concurrency", "4", "--keys", "100",
		"--duration", "20s", "--warmup", "200ms", "--threshold", "p99<1us", "--threshold", "violations==0",
		"--abort-on-fail", "--abort-after", "500ms", "--out", out)
	err := cmd.Wait()
	took := time.Since(began)
	if code := cmd.ProcessState.ExitCode(); code != exitThresholds {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, exitThresholds, errb)
	}
	assertServerGone(t, errb.String())
	for _, want := range []string{"stopped early: p99<1us failed: p99", "stopped by --abort-on-fail: 1 of 2 runs not started"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb)
		}
	}
	if took > 15*time.Second {
		t.Errorf("took %v: the 20s phase was not cut short", took)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.json"))
	if len(files) != 1 {
		t.Fatalf("result files %v", files)
	}
	f, err := results.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 1 || f.Complete {
		t.Fatalf("%d runs, complete %v; want the one aborted run, file incomplete", len(f.Runs), f.Complete)
	}
	r := f.Runs[0]
	if r.Complete || !strings.HasPrefix(r.Aborted, "p99<1us failed") || !strings.Contains(r.Incomplete, "aborted after") || r.DurationS > 5 || r.Acquisitions == 0 {
		t.Errorf("aborted run: complete %v, aborted %q, incomplete %q, %.1fs, %d acquisitions", r.Complete, r.Aborted, r.Incomplete, r.DurationS, r.Acquisitions)
	}
}

// TestSweepAbortOnFail: a sweep step already past the SLO stops early, counts as over, and
// the summary says how much measuring that saved.
func TestSweepAbortOnFail(t *testing.T) {
	t.Parallel()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "sweep", "--driver", "lockcore", "--concurrency-steps", "2,4", "--keys", "100",
		"--slo", "p99=1us", "--duration", "5s", "--warmup", "200ms", "--abort-on-fail", "--abort-after", "500ms", "--no-results")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sweep: %v\n%s", err, errb)
	}
	out := cmd.Stdout.(*bytes.Buffer).String()
	for _, want := range []string{"over", "stopped early, already past the SLO:", "s of measuring saved"} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep summary lacks %q:\n%s\n%s", want, out, errb)
		}
	}
}

// TestProcsServeMetrics: with --procs 2, each generator process serves its own port, PORT and
// PORT+1, with its index as the generator label and the parent's run id.
func TestProcsServeMetrics(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	for freePortAt(port+1) != nil {
		port = freePort(t)
	}
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--procs", "2", "--driver", "lockcore", "--concurrency", "2", "--keys", "100",
		"--duration", "4s", "--warmup", "200ms", "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", port), "--metrics-linger", "5s", "--no-results")
	seen := map[int]bool{}
	deadline := time.Now().Add(40 * time.Second)
	for len(seen) < 2 && time.Now().Before(deadline) {
		for i := range 2 {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port+i))
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, "lockbench_acquisitions_total{") && strings.Contains(line, fmt.Sprintf(`generator="%d"`, i)) && !strings.HasSuffix(line, " 0") {
					seen[i] = true
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run --procs 2: %v\n%s", err, errb)
	}
	if len(seen) != 2 {
		t.Errorf("acquisitions served by generators %v, want 0 and 1\n%s", seen, errb)
	}
	if !strings.Contains(errb.String(), "each generator process serves its own") {
		t.Errorf("stderr does not say where the metrics are:\n%s", errb)
	}
}

// freePortAt returns nil when port is free on loopback.
func freePortAt(port int) error {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err == nil {
		ln.Close()
	}
	return err
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
