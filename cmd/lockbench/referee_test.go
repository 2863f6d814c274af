package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose/redistest"
)

// TestRefereeCatchesUnsafeAcrossProcesses is the referee's negative control: the unsafe driver
// over three processes, holding longer than its 10 ms lease, has violations the referee itself counts (not only shared memory), and
// lockcore in the same run has none; the checkers line names the referee.
func TestRefereeCatchesUnsafeAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--procs", "3", "--driver", "unsafe,lockcore", "--concurrency", "2", "--keys", "1",
		"--hold", "20ms", "--duration", "1s", "--warmup", "0s", "--referee", "native", "--out", dir)
	code, stdout := finish(t, cmd, errb)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d (the unsafe driver's violations)\n%s\n%s", code, exitFailure, stdout, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 2 {
		t.Fatalf("%d runs", len(f.Runs))
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		checkMergedEqualsProcesses(t, r, 3, 2)
		if !slices.Contains(r.Checkers, "referee") || r.Referee == nil || r.Referee.Entries < r.Acquisitions || r.Referee.Errors != 0 {
			t.Fatalf("%s: checkers %v, referee %+v: want the referee to have seen every acquisition", r.Driver, r.Checkers, r.Referee)
		}
		switch r.Driver {
		case "unsafe":
			if r.Referee.Violations == 0 || len(r.Referee.Examples) == 0 || !strings.Contains(r.Referee.Examples[0], " and p") {
				t.Errorf("unsafe: the referee counted %d violations, examples %q: want them found and named", r.Referee.Violations, r.Referee.Examples)
			}
		case "lockcore":
			if r.Referee.Violations != 0 || r.Violations != 0 {
				t.Errorf("lockcore: %d violations (referee %d)", r.Violations, r.Referee.Violations)
			}
		}
	}
	if !strings.Contains(stdout, "checkers unsafe: in-process, shared-memory, referee") || !strings.Contains(errb.String(), "two holders at once") {
		t.Errorf("no checkers line naming the referee, or no violation named:\n%s\n%s", stdout, errb)
	}
	assertNoOrphans(t, errb.String(), 6)
}

// TestRefereeMayNotBeTheRedisUnderTest: run and worker refuse a referee that is the deployment
// itself, before measuring anything.
func TestRefereeMayNotBeTheRedisUnderTest(t *testing.T) {
	srv := redistest.NewServer(t)
	dir := t.TempDir()
	_, port, _ := strings.Cut(srv.Addr(), ":")
	for _, args := range [][]string{
		{"run", "--addr", srv.Addr(), "--referee", "localhost:" + port, "--driver", "naive", "--duration", "1s", "--out", dir},
		{"worker", "--addr", srv.Addr(), "--referee", "redis://" + srv.Addr(), "--run", "r1", "--driver", "naive", "--duration", "1s", "--out", dir},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "is the Redis under test") {
			t.Errorf("lockbench %s: exit %d, %q; want %d refusing the referee", args[0], code, errb.String(), exitUsage)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) != 0 {
		t.Errorf("a refused run wrote %v", files)
	}
	var out, errb bytes.Buffer
	for _, c := range []struct{ args []string }{
		{[]string{"worker", "--driver", "naive", "--addr", srv.Addr(), "--referee", "native", "--run", "r"}},
		{[]string{"worker", "--driver", "naive", "--addr", srv.Addr(), "--referee", srv.Addr()}},
		{[]string{"run", "--referee-ca-file", "ca.pem"}},
		{[]string{"run", "--referee", "http://x"}},
	} {
		out.Reset()
		errb.Reset()
		if code := dispatch(c.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--referee") {
			t.Errorf("lockbench %q: exit %d, %q; want %d about --referee", c.args, code, errb.String(), exitUsage)
		}
	}
}
