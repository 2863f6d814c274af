package main

import (
	"bytes"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/pin"
)

func TestPinBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"run", "--pin", "half"}, `--pin "half": want auto or off`},
		{[]string{"run", "--server-cpus", "1-0"}, "range 1-0 runs backwards"},
		{[]string{"run", "--client-cpus", "x"}, `"x" is not a CPU number`},
		{[]string{"run", "--server-cpus", "1000"}, "CPU 1000 does not exist here or is not available"},
		{[]string{"run", "--addr", "127.0.0.1:1", "--server-cpus", "0"}, "with --addr lockbench does not own the servers"},
		{[]string{"run", "--pin", "off", "--client-cpus", "0"}, "--pin off places nothing"},
		{[]string{"sweep", "--server-cpus", "1000"}, "CPU 1000 does not exist"},
		{[]string{"up", "--server-cpus", "1000"}, "CPU 1000 does not exist"},
		{[]string{"up", "--server-cpus", ""}, "empty"},
	} {
		var out, errb bytes.Buffer
		code := dispatch(tc.args, &out, &errb)
		if all := out.String() + errb.String(); code != exitUsage || !strings.Contains(all, tc.out) {
			t.Errorf("lockbench %q: exit %d, output %q; want exit %d containing %q", tc.args, code, all, exitUsage, tc.out)
		}
	}
}

// With --server-cpus and --client-cpus the server and lockbench run where they were told (read
// from the kernel while the run is on), the summary says so, and the result records it.
func TestPinnedRunPlacesServerAndClient(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU placement is Linux only")
	}
	avail, err := pin.Available()
	if err != nil {
		t.Fatal(err)
	}
	if len(avail) < 2 {
		t.Skip("one CPU: a placement cannot be told from none")
	}
	server, client := avail[len(avail)-1:], avail[:1]
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore", "--concurrency", "8", "--keys", "100",
		"--duration", "2s", "--warmup", "200ms", "--out", dir,
		"--server-cpus", server.String(), "--client-cpus", client.String())
	var serverPid int
	deadline := time.Now().Add(20 * time.Second)
	for serverPid == 0 && time.Now().Before(deadline) {
		if m := pidLine.FindStringSubmatch(errb.String()); m != nil {
			serverPid, _ = strconv.Atoi(m[1])
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if serverPid == 0 {
		t.Fatalf("no redis-server pid on stderr:\n%s", errb)
	}
	if got, err := pin.Of(serverPid); err != nil || !slices.Equal(got, server) {
		t.Errorf("redis-server may run on %v (%v); want %v", got, err, server)
	}
	// The client is placed once the topology is up; the placement line says it is done.
	for !strings.Contains(errb.String(), "CPU placement:") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got, err := pin.Of(cmd.Process.Pid); err != nil || !slices.Equal(got, client) {
		t.Errorf("lockbench may run on %v (%v); want %v", got, err, client)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lockbench run: %v\nstderr:\n%s", err, errb)
	}
	out := cmd.Stdout.(*bytes.Buffer).String()
	want := "CPU placement: redis-server on CPU " + server.String() + ", lockbench on CPU " + client.String() + " (GOMAXPROCS 1, --pin manual)"
	if !strings.Contains(out, want) {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}
	f := readResult(t, dir)
	if p := f.Placement; p == nil || p.ServerCPUs != server.String() || p.ClientCPUs != client.String() || p.GOMAXPROCS != 1 || p.Shared || p.Mode != "manual" {
		t.Errorf("result placement %+v; want server %s, client %s, GOMAXPROCS 1, not shared, manual", p, server, client)
	}
	assertServerGone(t, errb.String())
}

// --pin off places nothing, and says that client and server share the CPUs.
func TestPinOffWarnsOfSharedCPUs(t *testing.T) {
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "naive", "--concurrency", "2", "--keys", "10",
		"--duration", "300ms", "--warmup", "0s", "--out", dir, "--pin", "off")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lockbench run: %v\nstderr:\n%s", err, errb)
	}
	if !strings.Contains(errb.String(), "warning: CPU placement off") || !strings.Contains(errb.String(), "share CPUs") {
		t.Errorf("no shared-CPU warning on stderr:\n%s", errb)
	}
	if p := readResult(t, dir).Placement; p == nil || p.Mode != "off" || !p.Shared || p.ServerCPUs != "" {
		t.Errorf("result placement %+v; want off, shared, no CPUs", p)
	}
}
