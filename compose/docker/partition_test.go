package docker_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/workloads"
)

// sentinelMaster returns the master address the sentinel at addr reports.
func sentinelMaster(ctx context.Context, addr string) (string, error) {
	info, err := docker.Command(ctx, addr, "INFO", "sentinel")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "master0:"); ok {
			for _, f := range strings.Split(rest, ",") {
				if a, ok := strings.CutPrefix(f, "address="); ok {
					return a, nil
				}
			}
		}
	}
	return "", errors.New("no master0 in INFO sentinel")
}

func role(ctx context.Context, addr string) string {
	info, err := docker.Command(ctx, addr, "INFO", "replication")
	if err != nil {
		return "unreachable: " + err.Error()
	}
	for _, line := range strings.Split(info, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(line), "role:"); ok {
			return r
		}
	}
	return ""
}

// A sentinel master cut off from its sentinels and replicas (docker network disconnect), while
// the clients still reach it: the sentinels promote a replica, the old master goes on
// accepting writes from the clients that still use it, and the two masters grant the same
// locks. The checker must report what that did (violations are expected, not hidden), and the
// run must end on time. Nothing is asserted about the number of double grants: it depends on
// how many locks were held when each client switched masters. It is logged, and the README
// quotes it.
func TestPartitionedSentinelMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Docker containers and waits for a failover")
	}
	t.Parallel() // with TestStartOnDocker and TestFailedTestLeavesNothing, after the sequential tests
	for _, name := range []string{"lockcore", "naive"} {
		t.Run(name, func(t *testing.T) {
			// A topology of its own (containers and networks labelled with its id): the two
			// drivers' failovers, most of this test's time, run at once.
			t.Parallel()
			topo := start(t, compose.Spec{Kind: compose.KindSentinel})
			ctx := t.Context()
			oldMaster := topo.Describe().Nodes[0].Addr
			sentinel := topo.Addrs()[0]
			if err := topo.Partition(ctx, topo.Addrs()[0]); !errors.Is(err, docker.ErrNoPartition) {
				t.Errorf("Partition of a sentinel: %v, want ErrNoPartition", err)
			}
			d, err := drivers.Get(name)
			if err != nil {
				t.Fatal(err)
			}

			const phase = 12 * time.Second
			var promotedAt atomic.Int64 // unix ns, 0 until the sentinels report a new master
			newMaster := make(chan string, 1)
			time.AfterFunc(time.Second, func() {
				if err := topo.Partition(ctx, oldMaster); err != nil {
					t.Errorf("partition: %v", err)
					close(newMaster)
					return
				}
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					if m, err := sentinelMaster(ctx, sentinel); err == nil && m != oldMaster {
						promotedAt.Store(time.Now().UnixNano())
						newMaster <- m
						return
					}
				}
				close(newMaster)
			})
			start := time.Now()
			run, err := workloads.Run(context.Background(), workloads.Plan{
				Workload: workloads.Contention{},
				// A hold time keeps locks held when the clients switch masters, which is when
				// the promoted master, which never saw them, grants them again.
				Config: workloads.Config{Concurrency: 16, Keys: 50, Hold: 20 * time.Millisecond, Duration: phase, Warmup: -1},
				Driver: d,
				// A short lease, so that locks whose release went to the old master do not
				// block their keys on the new one for the rest of the phase.
				Target: drivers.Config{Topology: compose.KindSentinel, Addrs: topo.Addrs(), MasterName: topo.Describe().MasterName, Lease: 2 * time.Second},
			})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > phase+workloads.DefaultReleaseTimeout+5*time.Second {
				t.Fatalf("run took %v with an %v phase", took, phase)
			}
			promoted, ok := <-newMaster
			if !ok {
				t.Fatal("sentinels did not promote a replica within 30s of the partition")
			}
			// Both sides accept writes: the old master, cut off from its sentinels, does not
			// know it was replaced.
			if r := role(ctx, oldMaster); r != "master" {
				t.Errorf("the partitioned old master %s reports role %q, want master", oldMaster, r)
			}
			for _, m := range []string{oldMaster, promoted} {
				if _, err := docker.Command(ctx, m, "SET", "lockbench:split-brain", m); err != nil {
					t.Errorf("SET on %s during the partition: %v", m, err)
				}
			}
			t.Logf("%s: master %s partitioned 1s into an %v phase, %s promoted %.1fs later; acquisitions %d, errors %d %v, violations (double grants) %d",
				name, oldMaster, phase, promoted, time.Duration(promotedAt.Load()-start.UnixNano()-int64(time.Second)).Seconds(),
				run.Acquisitions, run.Errors, run.ErrorsByKind, run.Violations)
			if !run.Complete {
				t.Errorf("run marked incomplete")
			}

			// Healed, the sentinels turn the old master into a replica of the promoted one,
			// and what was written to it during the partition is gone.
			if err := topo.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			hctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			for role(hctx, oldMaster) != "slave" {
				if hctx.Err() != nil {
					t.Fatalf("after Heal the old master %s still reports role %q", oldMaster, role(ctx, oldMaster))
				}
				time.Sleep(100 * time.Millisecond)
			}
			for {
				v, err := docker.Command(hctx, oldMaster, "GET", "lockbench:split-brain")
				if err == nil && v == promoted {
					break
				}
				if hctx.Err() != nil {
					t.Fatalf("the old master still has %q (%v), want the promoted master's value %q", v, err, promoted)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
