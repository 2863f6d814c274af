package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/results"
)

// clockSkew is how far TestWorkersCollectedWithoutSharedVolume sets two workers' clocks off.
const clockSkew = 30 * time.Second

// TestWorkersCollectedWithoutSharedVolume runs three workers that hand their results back
// through a separate Redis (with a password) and no file, two of them with clocks 30 s off, merges
// them with merge --from, and checks the clocks were taken out of the start and the refusals:
// another process count, a run with nothing stored, and a process stored twice.
func TestWorkersCollectedWithoutSharedVolume(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	store := redistest.NewServer(t, "--requirepass", "c0llect")
	storeURL := "redis://:c0llect@" + store.Addr()
	dir := t.TempDir()
	const run = "collect-test"
	config := []string{"--addr", srv.Addrs()[0], "--driver", "lockcore", "--concurrency", "3", "--keys", "1", "--duration", "1s", "--warmup", "0s",
		"--procs", "3", "--run", run, "--collect", store.Addr(), "--out", dir}
	start := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	skews := []time.Duration{0, clockSkew, -clockSkew}
	var workers []*exec.Cmd
	var errbs []*syncBuffer
	for i := range 3 {
		errb := &syncBuffer{}
		// The password from collect's own variable, not the command line; processes 1 and 2
		// have clocks 30 s ahead and behind (the test hook), as other machines' could be.
		env := []string{collect.EnvPassword + "=c0llect", bench.EnvClockSkew + "=" + skews[i].String()}
		workers = append(workers, lockbenchEnv(t, errb, env,
			append([]string{"worker", "--index", strconv.Itoa(i), "--start-at", start}, config...)...))
		errbs = append(errbs, errb)
	}
	for i, w := range workers {
		if code, _ := finish(t, w, errbs[i]); code != exitOK {
			t.Fatalf("worker %d: exit %d\n%s", i, code, errbs[i])
		}
	}
	s, err := collect.Open(t.Context(), collect.Options{Addr: storeURL})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) != 0 {
		t.Errorf("workers with --collect and no --output wrote files %v", files)
	}

	merged := filepath.Join(dir, "merged.json")
	var out, errb bytes.Buffer
	if code := dispatch([]string{"merge", "--from", storeURL, "--run", run, "--expect", "3", "-o", merged}, &out, &errb); code != exitOK {
		t.Fatalf("merge --from: exit %d\n%s%s", code, out.String(), errb.String())
	}
	f, err := results.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 1 || !f.Complete {
		t.Fatalf("merged %d runs, complete %v", len(f.Runs), f.Complete)
	}
	r := &f.Runs[0]
	checkMergedEqualsProcesses(t, r, 3, 3)
	for _, p := range r.Fleet.Processes {
		if p.Version != version || r.Fleet.RunID != run {
			t.Errorf("process %d: version %q, run %q; want %q and %q", p.Index, p.Version, r.Fleet.RunID, version, run)
		}
	}
	// The skewed clocks were taken out: each process found its skew, and they started together
	// by the deployment's clock and by this machine's, far closer than the skew.
	for i, p := range r.Fleet.Processes {
		want := -float64(skews[i].Milliseconds())
		if p.Clock == nil || p.Clock.Source != srv.Addrs()[0] || p.Clock.OffsetMS < want-1000 || p.Clock.OffsetMS > want+1000 {
			t.Errorf("process %d: clock %+v, want %s's with an offset near %gms", i, p.Clock, srv.Addrs()[0], want)
		}
	}
	if half := float64(clockSkew.Milliseconds()) / 2; r.Fleet.StartSpreadMS >= half || r.Fleet.StartSkewMS >= half {
		t.Errorf("processes started %gms apart by the deployment's clock, %gms by this machine's: the %v skews were not taken out", r.Fleet.StartSpreadMS, r.Fleet.StartSkewMS, clockSkew)
	}
	if strings.Contains(errb.String()+out.String(), "c0llect") {
		t.Error("merge printed the store's password")
	}

	cases := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--expect", "4"}, exitUsage, "process 0 was one of 3 processes, not of 4"},
		{[]string{"--run", "no-such-run"}, exitFailure, "no result of run no-such-run"},
		{[]string{"--run", "bad id"}, exitUsage, "--run"},
		{[]string{"a.json"}, exitUsage, "not both"},
	}
	for _, c := range cases {
		args := append([]string{"merge", "--from", storeURL, "--run", run, "-o", filepath.Join(dir, "refused.json")}, c.args...)
		var out, errb bytes.Buffer
		if code := dispatch(args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.says) {
			t.Errorf("merge %v: exit %d, %q; want %d saying %q", c.args, code, errb.String(), c.code, c.says)
		}
	}

	// Process 1 stored twice: refused, naming it; nothing written.
	stored, err := s.List(t.Context(), run)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Get(t.Context(), run, stored[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), run, 1, 3, again); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	twice := filepath.Join(dir, "twice.json")
	if code := dispatch([]string{"merge", "--from", storeURL, "--run", run, "-o", twice}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "process 1 stored a result twice") {
		t.Errorf("a duplicate: exit %d, %q; want %d naming process 1", code, errb.String(), exitUsage)
	}
	if _, err := results.ReadFile(twice); err == nil {
		t.Error("a refused merge wrote its output")
	}
}

// TestProcsCollectThroughRedis runs --procs with --collect: the processes hand their results
// back through the store, the parent merges them from there and leaves the store empty.
func TestProcsCollectThroughRedis(t *testing.T) {
	t.Parallel()
	store := redistest.NewServer(t, "--requirepass", "c0llect")
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--procs", "2", "--driver", "lockcore", "--concurrency", "2", "--keys", "1",
		"--duration", "1s", "--warmup", "0s", "--out", dir, "--collect", "redis://:c0llect@"+store.Addr())
	code, stdout := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 1 || !f.Complete {
		t.Fatalf("%d runs, complete %v", len(f.Runs), f.Complete)
	}
	r := &f.Runs[0]
	checkMergedEqualsProcesses(t, r, 2, 2)
	if !strings.Contains(errb.String(), "results collected on redis://:***@") || r.Fleet.RunID == "" {
		t.Errorf("run id %q; stderr does not say where results were collected:\n%s", r.Fleet.RunID, errb)
	}
	for _, arg := range cmd.Args {
		if strings.Contains(arg, "c0llect") && arg != "redis://:c0llect@"+store.Addr() {
			t.Errorf("argument %q carries the password", arg)
		}
	}
	s, err := collect.Open(t.Context(), collect.Options{Addr: "redis://:c0llect@" + store.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if left, err := s.List(t.Context(), r.Fleet.RunID); err != nil || len(left) != 0 {
		t.Errorf("the store keeps %d results of the run after it merged them (%v)", len(left), err)
	}
}

func TestCollectFlagsBadInput(t *testing.T) {
	t.Parallel()
	addr := []string{"--addr", "127.0.0.1:1", "--driver", "naive"}
	cases := []struct {
		args []string
		says string
	}{
		{append([]string{"worker", "--collect", "127.0.0.1:2"}, addr...), "--collect needs --run ID"},
		{append([]string{"worker", "--collect", "http://x:1", "--run", "r"}, addr...), "--collect: "},
		{append([]string{"worker", "--run", "a/b"}, addr...), "--run: "},
		{append([]string{"worker", "--collect-ca-file", "ca.pem"}, addr...), "--collect-ca-file needs --collect"},
		{[]string{"run", "--collect", "127.0.0.1:2"}, "give --procs N"},
		{[]string{"merge", "--from", "127.0.0.1:2", "-o", "x.json"}, "--from needs --run"},
		{[]string{"merge", "--run", "r", "x.json", "-o", "y.json"}, "go with --from"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := dispatch(c.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), c.says) {
			t.Errorf("lockbench %q: exit %d, %q; want %d saying %q", c.args, code, errb.String(), exitUsage, c.says)
		}
	}
}
