package workloads

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/redis/rueidis"
)

// Killing the sentinel-managed master mid-run must not hang the run: the client follows the
// replica the sentinels promote, errors during the switch are counted, and whatever the lost
// writes of asynchronous replication did to mutual exclusion is reported by the checker.
func TestSentinelFailoverMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sentinel deployment and waits for a failover")
	}
	t.Parallel() // its own deployments; most of its time is waiting for the failover
	// naive and redislock run with go-redis's default retries and with none (retries=0): a
	// command sent again after a failure whose first attempt ran must still not grant a lock
	// twice; violations, which asynchronous replication can cause on its own, are logged.
	for _, name := range []string{"lockcore", "naive", "naive:retries=0", "redislock", "redislock:retries=0"} {
		t.Run(name, func(t *testing.T) {
			// Each driver has a deployment of its own, so the five 15 s phases and their
			// failovers run at once rather than one after another.
			t.Parallel()
			s := redistest.NewSentinel(t)
			ctx := t.Context()
			oldMaster, err := s.MasterAddr(ctx)
			if err != nil {
				t.Fatal(err)
			}
			d, err := drivers.Parse(name)
			if err != nil {
				t.Fatal(err)
			}

			// The kill happens 1 s into the measured phase; a counting wrapper tells how many
			// locks were granted after the sentinels had promoted a replica. 15 s: on a loaded CI
			// machine the promotion once took longer than an 8 s phase.
			const phase = 15 * time.Second
			counted := &countingDriver{Driver: d}
			newMaster := make(chan string, 1)
			time.AfterFunc(time.Second, func() {
				if err := s.Kill(oldMaster); err != nil {
					t.Errorf("kill master: %v", err)
				}
				go func() {
					for deadline := time.Now().Add(phase); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
						if m, err := s.MasterAddr(ctx); err == nil && m != oldMaster {
							counted.promoted.Store(true)
							newMaster <- m
							return
						}
					}
					close(newMaster)
				}()
			})
			start := time.Now()
			run, err := Run(context.Background(), Plan{
				Workload: Contention{},
				Config:   Config{Concurrency: 16, Keys: 1000, Duration: phase, Warmup: -1},
				Driver:   counted,
				// Locks whose release was lost in the switch stay on the promoted master until
				// their lease ends; a short lease keeps them from stalling every worker for the
				// rest of the phase (with 30 s they can, and the test would measure that, not
				// whether the client follows the new master).
				Target: drivers.Config{Topology: "sentinel", Addrs: s.Addrs(), MasterName: s.MasterName(), Lease: 2 * time.Second},
			})
			if err != nil {
				t.Fatal(err)
			}
			// A hang would be client timeouts stacking up (10 s each) or forever; the bound is
			// the phase plus the release grace plus slack, not a performance figure.
			if took := time.Since(start); took > phase+DefaultReleaseTimeout+5*time.Second {
				t.Fatalf("run took %v with an %v phase", took, phase)
			}
			promoted, ok := <-newMaster
			if !ok {
				t.Fatalf("sentinels did not promote a replica within %v", phase)
			}
			after := counted.grantsAfter.Load()
			t.Logf("%s: master %s killed, %s promoted; acquisitions %d (%d granted after the promotion), errors %d %v, violations %d",
				name, oldMaster, promoted, run.Acquisitions, after, run.Errors, run.ErrorsByKind, run.Violations)
			if run.Errors == 0 {
				t.Errorf("no errors counted across a master failure: %v", run.ErrorsByKind)
			}
			if after == 0 {
				t.Errorf("no lock granted after the promotion: the client did not follow the new master")
			}
			if run.Complete != true {
				t.Errorf("run marked incomplete")
			}
			if name == "lockcore" {
				// Replicas apply a script's effects, not the EVALSHA, so EVALSHA calls on the
				// promoted node were sent to it by lockcore after the switch.
				if n := commandCalls(t, promoted, "evalsha"); n == 0 {
					t.Errorf("no EVALSHA on the promoted master %s", promoted)
				}
			}
		})
	}
}

// commandCalls reads one command's call count from a node's INFO commandstats.
func commandCalls(t *testing.T, addr, cmd string) int64 {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls="); ok {
			n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
			return n
		}
	}
	return 0
}

// countingDriver counts the locks its workers are granted once promoted is set and, if granted is
// not nil, offers every grant on it without blocking: a receiver waiting on an unbuffered channel
// learns of the next grant after it started waiting.
type countingDriver struct {
	drivers.Driver
	promoted    atomic.Bool
	grantsAfter atomic.Int64
	granted     chan struct{}
}

func (d *countingDriver) Open(ctx context.Context, cfg drivers.Config) (drivers.Locker, error) {
	l, err := d.Driver.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &countingLocker{Locker: l, d: d}, nil
}

type countingLocker struct {
	drivers.Locker
	d *countingDriver
}

func (l *countingLocker) NewWorker() drivers.Worker {
	w := l.Locker.NewWorker()
	cw := &countingWorker{Worker: w, d: l.d}
	// A fenced driver's workers stay fenced, so that the workload still takes and checks tokens.
	if fw, ok := w.(drivers.FencedWorker); ok {
		return &countingFencedWorker{countingWorker: cw, fenced: fw}
	}
	return cw
}

type countingFencedWorker struct {
	*countingWorker
	fenced drivers.FencedWorker
}

func (w *countingFencedWorker) LockFenced(ctx context.Context, name string) (int64, error) {
	token, err := w.fenced.LockFenced(ctx, name)
	if err == nil {
		w.d.grant()
	}
	return token, err
}

type countingWorker struct {
	drivers.Worker
	d *countingDriver
}

func (w *countingWorker) Lock(ctx context.Context, name string) error {
	err := w.Worker.Lock(ctx, name)
	if err == nil {
		w.d.grant()
	}
	return err
}

// grant counts one grant.
func (d *countingDriver) grant() {
	if d.promoted.Load() {
		d.grantsAfter.Add(1)
	}
	if d.granted != nil {
		select {
		case d.granted <- struct{}{}:
		default:
		}
	}
}
