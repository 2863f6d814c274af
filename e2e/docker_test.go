package e2e

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
)

// assertNothingLeft checks that the lockbench process with that pid left no container or
// network behind.
func assertNothingLeft(t *testing.T, pid int) {
	t.Helper()
	cs, ns, err := docker.Resources(context.Background(), docker.LabelPID+"="+strconv.Itoa(pid))
	if err != nil || len(cs)+len(ns) > 0 {
		t.Fatalf("lockbench (pid %d) left containers %v, networks %v (error %v)", pid, cs, ns, err)
	}
}

// removeLeft removes what the lockbench process with that pid left, so that a failed test
// does not leave it to the next Reap.
func removeLeft(pid int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, _, _ := docker.Resources(ctx, docker.LabelPID+"="+strconv.Itoa(pid))
	if len(cs) > 0 {
		docker.Reap(ctx) // the pid has exited by now, so Reap takes it
	}
}

// lockbench run --provider docker on each topology, from the test image: the per-node table,
// no violations, the provider recorded, and no container or network left.
func TestRunOnDocker(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	for _, topology := range []string{"single", "sentinel", "cluster"} {
		t.Run(topology, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			errb := &syncBuffer{}
			cmd := lockbench(t, errb, "run", "--provider", "docker", "--image", image, "--topology", topology,
				"--driver", "lockcore,naive", "--concurrency", "8", "--keys", "1000",
				"--duration", "1s", "--warmup", "0s", "--out", dir)
			code, out := finish(t, cmd, errb)
			t.Cleanup(func() { removeLeft(cmd.Process.Pid) })
			if code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
			}
			f := readResult(t, dir)
			if f.Topology.Provider != providerDocker || f.Topology.Kind != topology || len(f.Runs) != 2 {
				t.Fatalf("result: topology %+v, %d runs", f.Topology, len(f.Runs))
			}
			for _, r := range f.Runs {
				if r.Violations != 0 || r.Errors != 0 || r.Acquisitions == 0 || !r.Complete {
					t.Errorf("%s: %d violations, %d errors %v, %d acquisitions, complete %v", r.Driver, r.Violations, r.Errors, r.ErrorsByKind, r.Acquisitions, r.Complete)
				}
			}
			if topology == "cluster" && !strings.Contains(out, "per node") {
				t.Errorf("no per-node table:\n%s", out)
			}
			t.Logf("%s on docker:\n%s", topology, out)
			assertNothingLeft(t, cmd.Process.Pid)
		})
	}
}

// Ctrl-C while lockbench starts containers, and Ctrl-C during the measurement: either way it
// exits 130 and removes every container and network it made.
func TestCtrlCOnDockerRemovesEverything(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	for _, when := range []string{"starting", "measuring"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			errb := &syncBuffer{}
			cmd := lockbench(t, errb, "run", "--provider", "docker", "--image", image, "--topology", "sentinel",
				"--driver", "lockcore", "--concurrency", "4", "--keys", "100",
				"--duration", "60s", "--warmup", "0s", "--no-results")
			pid := cmd.Process.Pid
			t.Cleanup(func() { removeLeft(pid) })
			ready := func() bool {
				if when == "measuring" {
					return strings.Contains(errb.String(), "[1/1]")
				}
				cs, _, _ := docker.Resources(context.Background(), docker.LabelPID+"="+strconv.Itoa(pid))
				return len(cs) > 0
			}
			for deadline := time.Now().Add(2 * time.Minute); !ready(); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) || cmd.ProcessState != nil {
					t.Fatalf("lockbench did not get to %s:\n%s", when, errb)
				}
			}
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			code, _ := finish(t, cmd, errb)
			if code != exitInterrupted {
				t.Fatalf("exit %d after Ctrl-C while %s, want %d\n%s", code, when, exitInterrupted, errb)
			}
			assertNothingLeft(t, pid)
		})
	}
}

func TestImageBuildCommand(t *testing.T) {
	t.Parallel()
	dockertest.Image(t) // builds it, so this run only finds it up to date
	if os.Getenv(dockertest.ImageEnv) != "" {
		t.Skipf("%s is set: the tests do not use the local image", dockertest.ImageEnv)
	}
	code, out, errs := lockbenchOut(t, "image", "build")
	if code != exitOK || out != docker.LocalImage+"\n" || !strings.Contains(errs, "up to date") {
		t.Fatalf("image build: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// isolate:master on the docker sentinel topology goes through the topology's Partition and Heal:
// the fault fires, lasts its 8 s, heals without error, the run ends on time and nothing is left.
// What the split then does to the locks (the sentinels promote a replica, the clients move to
// it: releases refused by the new master, double grants) is logged, not asserted: a sentinel
// election that fails once is retried only after 2 × failover-timeout (10 s), past the
// isolation. compose/docker's TestPartitionedSentinelMaster checks the promotion itself.
func TestRunIsolateOnDockerSentinel(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--provider", "docker", "--image", image, "--topology", "sentinel",
		"--driver", "lockcore", "--concurrency", "16", "--keys", "50", "--hold", "20ms", "--lease", "2s",
		"--duration", "12s", "--warmup", "500ms", "--fault", "isolate:master@1s+8s", "--timeline-interval", "500ms", "--out", dir)
	code, out := finish(t, cmd, errb)
	t.Cleanup(func() { removeLeft(cmd.Process.Pid) })
	if code != exitOK && code != exitFailure {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 1 || len(f.Runs[0].Faults) != 1 {
		t.Fatalf("%d runs; want 1 with its fault", len(f.Runs))
	}
	r := f.Runs[0]
	flt := r.Faults[0]
	t.Logf("phase %.2fs; errors %v; violations %d; fault %+v", r.DurationS, r.ErrorsByKind, r.Violations, flt)
	if !flt.Fired || flt.Error != "" || flt.LastedS < 8 {
		t.Errorf("fault %+v; want fired and healed after 8s without error", flt)
	}
	if code == exitFailure && r.Violations == 0 {
		t.Errorf("exit %d without violations:\n%s\n%s", code, out, errb)
	}
	if r.ErrorsByKind["lease_lost"]+r.Violations == 0 {
		t.Logf("no release refused and no double grant: the clients did not move to a promoted master within the isolation (errors %v)", r.ErrorsByKind)
	}
	if r.DurationS > 14 || r.Acquisitions == 0 {
		t.Errorf("phase %.2fs, %d acquisitions; want about 12s of grants", r.DurationS, r.Acquisitions)
	}
	assertNothingLeft(t, cmd.Process.Pid)
}
