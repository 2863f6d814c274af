package workloads

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Pause runs: a contention phase of pausePhase on a private server that receives SIGSTOP
// pauseAfter into the phase. A paused server keeps its sockets open and answers nothing, so
// unlike a killed one it produces no connection errors: only the clients' own timeouts
// (drivers.ReplyTimeout) can end a command already sent, and a release runs past the phase with
// nobody to cancel it.
const (
	pausePhase = 2 * time.Second
	pauseAfter = 500 * time.Millisecond
	// pauseHold keeps most workers holding a lock at any moment, so that when the server stops
	// some of them are about to release, and a release, unlike an acquire the phase's end cuts
	// short, is counted when it fails. With no hold the fair drivers spend most of a cycle
	// acquiring, and a pause that catches all eight workers acquiring would count nothing.
	pauseHold = 10 * time.Millisecond
	// pauseResumeAfter is how long the resuming variant keeps the server stopped.
	pauseResumeAfter = time.Second
	// pauseLease keeps locks whose release was lost in the pause short-lived.
	pauseLease = time.Second
	// pauseBound is the hang check: the phase, a release's grace, and slack for a loaded
	// machine under -race. It is not a performance figure; a run over it waits on a client
	// timeout longer than the release grace, or on nothing at all.
	pauseBound = pausePhase + DefaultReleaseTimeout + 3*time.Second
	// pauseHung is when a run still going counts as hung: the server is resumed so that it ends.
	// Above every driver's pauseLonger.
	pauseHung = 3*pauseBound + 30*time.Second
)

// pauseSilent names the drivers that count no error while the server is paused, and why: their
// library gives the adapter nothing to return.
var pauseSilent = map[string]string{
	"rueidislock": "rueidislock's unlock is a CancelFunc that deletes the keys with a bounded wait of its own and " +
		"reports nothing; its acquire attempts time out and are retried inside WithContext until the phase ends; " +
		"a hold whose renewals fail is lost only after the 1 s validity, which outlasts the hold",
}

// pauseLonger names the drivers whose library itself waits longer than the release grace with
// the server paused, how much longer, and why: the emulation reproduces it, so the run waits too.
var pauseLonger = map[string]struct {
	extra time.Duration
	why   string
}{
	"redisson-fair": {25 * time.Second, "Redisson 4.x's tryLock leaves the fair queue before it returns " +
		"(acquireFailed, synchronous) and retries the leave 4 times after a failure (syncedEvalWithRetry, " +
		"redisson-4.0.0+): 5 attempts of a 3 s reply timeout, 1-2 s apart, with the server paused"},
}

// A server paused (SIGSTOP) mid-run must not hold the run hostage on any driver: the run ends
// within the bound with the server still stopped, and the releases the pause caught fail on the
// client's timeout and are counted as timeouts.
func TestServerPausedMidRun(t *testing.T) {
	t.Parallel() // each run pauses a server of its own; most of the time is waiting on it
	for name := range pauseSilent {
		if _, err := drivers.Get(name); err != nil {
			t.Errorf("pauseSilent lists %s: %v", name, err)
		}
	}
	for _, name := range drivers.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			run, took := pausedRun(t, name, 0)
			bound := pauseBound
			if longer, ok := pauseLonger[name]; ok {
				bound += longer.extra
				t.Logf("%s may take %v longer: %s", name, longer.extra, longer.why)
			}
			if took > bound {
				t.Errorf("run took %v with the server paused (bound %v): the driver waits on a timeout longer than the release grace", took, bound)
			}
			if run.Acquisitions == 0 {
				t.Errorf("no acquisitions in the %v before the pause", pauseAfter)
			}
			// The server never answers again, so every command in flight fails. An acquire
			// is cut short by the phase's end and, like any such acquire, not counted; a
			// release has no phase to end it and fails on the client's timeout, counted.
			if why, silent := pauseSilent[name]; silent {
				t.Logf("%s counts no errors by design: %s", name, why)
			} else if run.ErrorsByKind[kindTimeout] == 0 {
				// A paused server answers nothing: what fails, fails on a deadline.
				t.Errorf("no timeout errors counted with the server paused: %v", run.ErrorsByKind)
			}
		})
	}
}

// A server paused for pauseResumeAfter and resumed must not end the run on any driver: commands
// sent during the pause get their replies after the resume and the workers go on taking locks.
func TestServerPausedAndResumedMidRun(t *testing.T) {
	t.Parallel() // each run pauses a server of its own; most of the time is waiting on it
	for _, name := range drivers.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			counted := &countingDriver{}
			run, took := pausedRun(t, name, pauseResumeAfter, counted)
			if took > pauseBound {
				t.Errorf("run took %v with a %v pause (bound %v)", took, pauseResumeAfter, pauseBound)
			}
			if after := counted.grantsAfter.Load(); after == 0 {
				t.Errorf("no lock granted after the server resumed (acquisitions %d, errors %d %v)", run.Acquisitions, run.Errors, run.ErrorsByKind)
			}
			if !run.Complete {
				t.Errorf("run marked incomplete: %s", run.Incomplete)
			}
		})
	}
}

// pausedRun runs the pause workload on driver name against a private server, SIGSTOPs the server
// pauseAfter into the phase and, if resume is positive, SIGCONTs it resume later. With a counting
// driver, the locks granted after the resume are counted in it. It returns the run and how long
// Run took, and logs both.
func pausedRun(t *testing.T, name string, resume time.Duration, counted ...*countingDriver) (results.Run, time.Duration) {
	t.Helper()
	srv := redistest.NewServer(t)
	d, err := drivers.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	// Every run goes through a counting driver: the pause waits for a grant (see below).
	if len(counted) == 0 {
		counted = []*countingDriver{{}}
	}
	counted[0].Driver = d
	counted[0].granted = make(chan struct{})
	d = counted[0]
	pid := srv.Pid()
	// Registered after NewServer's cleanup, so it runs first (t.Cleanup is LIFO): a stopped
	// server cannot handle the SIGTERM Close sends. SIGCONT to a running process is harmless.
	t.Cleanup(func() {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Errorf("resume redis-server %d: %v", pid, err)
		}
	})
	plan := Plan{
		Workload: Contention{},
		Config:   Config{Concurrency: 8, Keys: 100, Hold: pauseHold, Duration: pausePhase, Warmup: -1},
		Driver:   d,
		Target:   drivers.Config{Topology: "single", Addrs: srv.Addrs(), Lease: pauseLease},
	}
	// There is no warm-up: the phase starts as soon as the driver is open, which the wrapper
	// marks, so the pause lands pauseAfter into the phase rather than into Open.
	opened := make(chan struct{})
	plan.Driver = &openNotifier{Driver: plan.Driver, opened: opened}
	faults := make(chan error, 2)
	done := make(chan struct{})
	go func() {
		defer close(faults)
		for _, step := range []struct {
			after time.Duration
			sig   syscall.Signal
		}{{pauseAfter, syscall.SIGSTOP}, {resume, syscall.SIGCONT}} {
			if step.sig == syscall.SIGCONT && resume <= 0 {
				return
			}
			select {
			case <-opened:
			case <-done:
				return
			}
			select {
			case <-time.After(step.after):
			case <-done:
				return
			}
			if step.sig == syscall.SIGSTOP {
				// Stop the server just after a grant, so that a worker is holding a lock it
				// will release pauseHold later into the stopped server: that release must fail
				// and be counted. Stopping at an arbitrary instant can catch every worker
				// acquiring (on a loaded machine the acquires are slow), and acquires cut short
				// by the phase's end are not counted, so the check would fail for no fault.
				select {
				case <-counted[0].granted:
				case <-time.After(pausePhase):
					faults <- fmt.Errorf("no lock granted in the %v after the pause was due", pausePhase)
				case <-done:
					return
				}
			}
			if step.sig == syscall.SIGCONT {
				counted[0].promoted.Store(true)
			}
			if err := syscall.Kill(pid, step.sig); err != nil {
				faults <- fmt.Errorf("signal %v to redis-server %d: %w", step.sig, pid, err)
			}
		}
	}()
	start := time.Now()
	var run results.Run
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		run, err = Run(context.Background(), plan)
	}()
	select {
	case <-ran:
	case <-time.After(pauseHung):
		// A hang fails the test instead of running into go test's timeout; the resumed server
		// lets the run, and so the test, end.
		t.Errorf("run still going after %v: resuming the server", pauseHung)
		syscall.Kill(pid, syscall.SIGCONT)
		<-ran
	}
	took := time.Since(start)
	close(done)
	for err := range faults {
		t.Error(err)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	after := counted[0].grantsAfter.Load()
	t.Logf("%s: run took %v (phase %v, pause at %v, resume after %v); acquisitions %d (after resume %d), errors %d %v, violations %d",
		name, took.Round(time.Millisecond), pausePhase, pauseAfter, resume, run.Acquisitions, after, run.Errors, run.ErrorsByKind, run.Violations)
	return run, took
}

// openNotifier closes opened when its driver's Open returns, which is when Run starts the phase
// of a run without warm-up.
type openNotifier struct {
	drivers.Driver
	opened chan struct{}
}

func (d *openNotifier) Open(ctx context.Context, cfg drivers.Config) (drivers.Locker, error) {
	defer close(d.opened)
	return d.Driver.Open(ctx, cfg)
}
