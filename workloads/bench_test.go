package workloads

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// nodeStats reads one node's INFO as a one-node ServerStats.
func nodeStats(rdb rueidis.Client, addr string) func(context.Context) (results.ServerStats, error) {
	return func(ctx context.Context) (results.ServerStats, error) {
		cmds, err := rdb.Do(ctx, rdb.B().Info().Section("commandstats").Build()).ToString()
		if err != nil {
			return nil, err
		}
		cpu, err := rdb.Do(ctx, rdb.B().Info().Section("cpu").Build()).ToString()
		if err != nil {
			return nil, err
		}
		cs, err := results.ParseCommandStats(cmds)
		if err != nil {
			return nil, err
		}
		d, err := results.ParseCPU(cpu)
		if err != nil {
			return nil, err
		}
		return results.ServerStats{{Addr: addr, Role: results.RoleMaster, Commands: cs, CPU: d}}, nil
	}
}

func TestRunMeasuresServerStatsAndCPU(t *testing.T) {
	srv := redistest.NewServer(t)
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rdb.Close)
	d, _ := drivers.Get("naive")
	run, err := Run(context.Background(), Plan{
		Workload:    Contention{},
		Config:      Config{Concurrency: 4, Keys: 50, Duration: 300 * time.Millisecond, Warmup: -1},
		Driver:      d,
		Target:      drivers.Config{Topology: "single", Addrs: srv.Addrs()},
		ServerStats: nodeStats(rdb, srv.Addrs()[0]),
	})
	if err != nil {
		t.Fatal(err)
	}
	if run.Acquisitions == 0 {
		t.Fatal("no acquisitions")
	}
	// naive: at least a SET NX and a compare-and-delete per acquisition.
	if run.RedisCommandsPerAcquisition < 2 {
		t.Errorf("%.2f commands per acquisition, want ≥ 2", run.RedisCommandsPerAcquisition)
	}
	if len(run.Nodes) != 1 || run.Nodes[0].Addr != srv.Addrs()[0] || run.Nodes[0].Commands != run.RedisCommands {
		t.Errorf("nodes %+v, want the one server with all %d commands", run.Nodes, run.RedisCommands)
	}
	// Serving thousands of commands costs the server and the client some CPU; zero would mean
	// the figures are not measured.
	if run.ServerCPUUS <= 0 || run.ServerCPUPerAcquisitionUS <= 0 {
		t.Errorf("server CPU %v µs (%v per acquisition), want > 0", run.ServerCPUUS, run.ServerCPUPerAcquisitionUS)
	}
	if _, ok := processCPU(); ok && (run.ClientCPUUS <= 0 || run.ClientCPUPerAcquisitionUS <= 0) {
		t.Errorf("client CPU %v µs (%v per acquisition), want > 0", run.ClientCPUUS, run.ClientCPUPerAcquisitionUS)
	}
}

func TestMissingKindIsUnsupported(t *testing.T) {
	_, err := Run(context.Background(), Plan{Workload: needsMore{}, Driver: noLock{}, Target: drivers.Config{Addrs: []string{"x:1"}}})
	if !errors.Is(err, drivers.ErrUnsupported) {
		t.Fatalf("error %v does not wrap drivers.ErrUnsupported: callers could not skip the combination", err)
	}
}

func TestProcessCPUAdvances(t *testing.T) {
	before, ok := processCPU()
	if !ok {
		t.Skip("no process CPU time on this OS")
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	after, _ := processCPU()
	if after <= before {
		t.Fatalf("CPU time %v then %v after %d busy iterations", before, after, x)
	}
}

// TestRunRecordsWaiting checks that a run of a driver that waits on pub/sub records its waiting
// (here the redisson driver, 16 workers on 2 keys held 2 ms: waiters subscribe and are woken by
// messages, and nothing stays subscribed), and that a polling driver's run records none.
func TestRunRecordsWaiting(t *testing.T) {
	srv := redistest.NewServer(t)
	for _, c := range []struct {
		driver  string
		counted bool
	}{{"redisson:version=3.43", true}, {"naive", false}} {
		d, err := drivers.Parse(c.driver)
		if err != nil {
			t.Fatal(err)
		}
		run, err := Run(context.Background(), Plan{
			Workload: Contention{},
			Config:   Config{Concurrency: 16, Keys: 2, Hold: 2 * time.Millisecond, Duration: 300 * time.Millisecond, Warmup: -1},
			Driver:   d,
			Target:   drivers.Config{Topology: "single", Addrs: srv.Addrs()},
		})
		if err != nil {
			t.Fatal(err)
		}
		w := run.Waiting
		if !c.counted {
			if w != nil {
				t.Errorf("%s: waiting %+v recorded for a polling driver", c.driver, w)
			}
			continue
		}
		if w == nil || w.Subscribes == 0 || w.WokenByMessage == 0 || w.PeakChannels == 0 || w.PeakChannels > 2 || w.ChannelsAfter != 0 {
			t.Errorf("%s: waiting %+v: want subscribes, wake-ups, at most 2 channels at once and none left", c.driver, w)
		}
	}
}
