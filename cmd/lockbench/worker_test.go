package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/workloads"
)

// The one argument format of a worker: what bench.WorkerSpec.Args writes, lockbench worker
// reads back to the same spec, defaults spelled out (Filled), every setting a parent gives its
// processes included.
func TestWorkerSpecRoundTrip(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 23, 12, 0, 0, 123, time.UTC)
	base := bench.WorkerSpec{Driver: "naive", Addrs: []string{"127.0.0.1:7000"}}
	// A password file is a path on the command line; the password itself is read by the worker.
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(w *bench.WorkerSpec)
	}{
		{"defaults", func(*bench.WorkerSpec) {}},
		{"a --procs process", func(w *bench.WorkerSpec) {
			w.Driver, w.Workload = "lockcore:handoff=0", "rw"
			w.Config = workloads.Config{Concurrency: 5, Keys: 50, KeyDist: "zipf", ZipfS: 1.3, Hold: time.Millisecond, ReadRatio: -1,
				Warmup: -1, Duration: 5 * time.Second, Seed: 7, KeyPrefix: "bench:"}
			w.Lease = 2 * time.Second
			w.Topology = compose.Spec{Kind: compose.KindSentinel, MasterName: "orders"}
			w.Addrs = []string{"10.0.0.1:26379", "10.0.0.2:26379"}
			w.Procs, w.Index, w.StartAt, w.Output, w.Arena = 4, 2, start, "/out/p2.json", "/dev/shm/a"
			w.Net, w.FleetNet = "latency=5ms", "0: latency=1ms; 1: latency=1ms; 2: latency=5ms; 3: latency=1ms"
			w.Stalls = []bench.Stall{{At: time.Second, For: 500 * time.Millisecond}, {At: 2500 * time.Millisecond, For: 1500 * time.Millisecond}}
			w.Metrics = bench.WorkerMetrics{Addr: "127.0.0.1:9466", RunID: "ab12", Round: 3, Linger: 2 * time.Second}
			w.CPUProfile, w.Trace = "/tmp/c.prof.run1.lockcore_handoff-0.p2", "/tmp/t.trace.run1.lockcore_handoff-0.p2"
		}},
		{"reentrancy, depth", func(w *bench.WorkerSpec) {
			w.Workload, w.Driver = "reentrancy", "lockcore"
			w.Config.Depth = 5
		}},
		{"multilock, fanout", func(w *bench.WorkerSpec) {
			w.Workload, w.Driver = "multilock", "lockcore"
			w.Config = workloads.Config{Keys: 100, Fanout: 4}
		}},
		{"open loop, its share of the rate", func(w *bench.WorkerSpec) {
			w.Config = workloads.Config{Rate: 1250.5, Arrival: "poisson", Concurrency: 64}
			w.Procs, w.Index = 2, 1
		}},
		{"masters, local clock", func(w *bench.WorkerSpec) {
			w.Topology = compose.Spec{Kind: compose.KindMasters, Masters: 3}
			w.Addrs = []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}
			w.Clock, w.StartAt = bench.ClockLocal, start
		}},
		{"collected, refereed, a resource", func(w *bench.WorkerSpec) {
			w.RunID = "nightly-42"
			w.Collect = bench.Endpoint{Addr: "rediss://10.0.0.9:6380"}
			w.Referee = bench.Endpoint{Addr: "redis://10.0.0.8:6379"}
			w.Resource = "fenced"
			w.Output, w.NoResults, w.Out = "", true, "/data"
		}},
		{"credentials by file, TLS", func(w *bench.WorkerSpec) {
			w.Topology = compose.Spec{Kind: compose.KindSentinel}
			w.Conn = conn.Options{User: "bench", PasswordFile: pw, SentinelUser: "sent", SentinelPasswordFile: pw, TLS: true, ServerName: "redis.internal"}
		}},
		{"TLS without verification", func(w *bench.WorkerSpec) {
			w.Conn = conn.Options{TLS: true, InsecureSkipVerify: true}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := base
			tc.edit(&w)
			args := w.Args()
			if args[0] != cmdWorker {
				t.Fatalf("args start with %q", args[0])
			}
			var sink bytes.Buffer
			got, _, code, ok := parseWorker(args[1:], &sink, &sink)
			if !ok {
				t.Fatalf("the worker refuses the args: exit %d: %s\n%q", code, sink.String(), args)
			}
			if want := w.Filled(); !reflect.DeepEqual(got, want) {
				t.Errorf("read back\n%+v\nwant\n%+v\nfrom %q", got, want, args)
			}
			if again := got.Args(); !slices.Equal(again, args) {
				t.Errorf("written again\n%q\nfirst\n%q", again, args)
			}
			if strings.Contains(strings.Join(args, " "), "s3cret") {
				t.Errorf("the password is on the command line: %q", args)
			}
		})
	}
}

// A worker spec carries no password: the parent's deployment, collection store and referee
// passwords go by environment (see bench's TestFleetWorkersGetNoPassword), and a spec read from a
// command line that had one in a URL keeps the URL as given (the worker warns).
func TestWorkerArgsHaveNoSecretField(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(bench.WorkerSpec{})
	for i := range typ.NumField() {
		if name := strings.ToLower(typ.Field(i).Name); strings.Contains(name, "password") || strings.Contains(name, "secret") {
			t.Errorf("WorkerSpec.%s: a password has no place on a command line", typ.Field(i).Name)
		}
	}
}
