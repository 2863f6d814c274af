package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// fakeTarget records what a schedule asks of it; a sentinel topology of 1 master, 2 replicas
// and 3 sentinels whose master becomes the first replica once the master is killed.
type fakeTarget struct {
	mu     sync.Mutex
	calls  []string
	killed bool
	paused map[string]bool
	fail   error // returned by Restart
	// killTakes is how long a kill takes, as a real one waits for the process to be gone.
	killTakes time.Duration
}

var _ Target = (*fakeTarget)(nil)

func (f *fakeTarget) log(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, a...))
}

func (f *fakeTarget) Describe() compose.Description {
	f.mu.Lock()
	defer f.mu.Unlock()
	roles := []compose.Node{{Addr: "m", Role: compose.RoleMaster}, {Addr: "r1", Role: compose.RoleReplica}, {Addr: "r2", Role: compose.RoleReplica}}
	if f.killed { // the first replica was promoted
		roles = []compose.Node{{Addr: "r1", Role: compose.RoleMaster}, {Addr: "m", Role: compose.RoleReplica}, {Addr: "r2", Role: compose.RoleReplica}}
	}
	return compose.Description{Kind: compose.KindSentinel, MasterName: "mymaster", Nodes: append(roles,
		compose.Node{Addr: "s1", Role: compose.RoleSentinel}, compose.Node{Addr: "s2", Role: compose.RoleSentinel}, compose.Node{Addr: "s3", Role: compose.RoleSentinel})}
}

func (f *fakeTarget) Kill(_ context.Context, addr string) error {
	f.log("kill %s", addr)
	time.Sleep(f.killTakes)
	f.mu.Lock()
	f.killed = true
	f.mu.Unlock()
	return nil
}

func (f *fakeTarget) Pause(_ context.Context, addr string) error {
	f.log("pause %s", addr)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.paused == nil {
		f.paused = map[string]bool{}
	}
	f.paused[addr] = true
	return nil
}

func (f *fakeTarget) Resume(_ context.Context, addr string) error {
	f.log("resume %s", addr)
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.paused, addr)
	return nil
}

func (f *fakeTarget) Restart(_ context.Context, addr string) error {
	f.log("restart %s", addr)
	return f.fail
}

func (f *fakeTarget) Failover(_ context.Context, replica string) error {
	f.log("failover %q", replica)
	return nil
}

func mustParse(t *testing.T, specs ...string) []Fault {
	t.Helper()
	var out []Fault
	for _, s := range specs {
		f, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// The faults fire in time order at their times; a restart brings back the server its kill
// killed, though "master" names another by then; a pause is resumed after its duration. OnFire
// is told when each fault took effect: as it fired, or for a kill once the process was gone.
func TestScheduleRunsFaultsInOrder(t *testing.T) {
	tgt := &fakeTarget{killTakes: 10 * time.Millisecond}
	var fired sync.Map
	s := &Schedule{
		Faults: mustParse(t, "restart:master@150ms", "kill:master@50ms", "pause:master@100ms+50ms", "failover@200ms"),
		Target: tgt,
		OnFire: func(i int, at time.Time) { fired.Store(i, at) },
	}
	start := time.Now()
	events := s.Run(context.Background(), start)

	want := []string{"kill m", "pause r1", "restart m", "resume r1", `failover ""`}
	// The restart and the resume are due at the same instant; either may come first.
	if got := tgt.calls; len(got) != len(want) || !sameSet(got, want) || got[0] != want[0] || got[1] != want[1] || got[4] != want[4] {
		t.Errorf("calls %q; want %q (restart and resume in either order)", got, want)
	}
	for i, ev := range events {
		if ev.Fault != s.Faults[i] || !ev.Fired || ev.Err != nil {
			t.Errorf("event %d: %+v; want the fault %q fired without error", i, ev, s.Faults[i].Spec)
			continue
		}
		if ev.FiredAt < ev.Fault.At {
			t.Errorf("%s fired at %v, before its time", ev.Fault.Spec, ev.FiredAt)
		}
		want := ev.FiredAt
		if ev.Fault.Action == Kill {
			if ev.Took < tgt.killTakes {
				t.Errorf("%s took %v; the kill took %v", ev.Fault.Spec, ev.Took, tgt.killTakes)
			}
			want += ev.Took
		}
		if ev.InEffectAt != want {
			t.Errorf("%s in effect at %v, want %v (fired %v, took %v)", ev.Fault.Spec, ev.InEffectAt, want, ev.FiredAt, ev.Took)
		}
		if at, ok := fired.Load(i); !ok || at.(time.Time).Sub(start) != want {
			t.Errorf("%s: OnFire saw %v, want %v (fired %v, took %v)", ev.Fault.Spec, at, want, ev.FiredAt, ev.Took)
		}
	}
	if p := events[2]; p.Addr != "r1" || p.Lasted < 50*time.Millisecond {
		t.Errorf("pause: %+v; want r1 (the master after the kill), lasting at least its 50ms", p)
	}
	if r := events[0]; r.Addr != "m" {
		t.Errorf("restart acted on %q; want m, the server the kill killed", r.Addr)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// When the phase ends early, a paused server is resumed at once, faults not yet due never fire,
// and Run returns promptly.
func TestScheduleEndResumesAndSkips(t *testing.T) {
	tgt := &fakeTarget{fail: errors.New("no binary")}
	s := &Schedule{Faults: mustParse(t, "pause:replica2@10ms+1h", "kill:master@1h"), Target: tgt}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	events := s.Run(ctx, began)
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("Run took %v after its context ended", took)
	}
	if len(tgt.paused) != 0 {
		t.Errorf("still paused after Run: %v", tgt.paused)
	}
	if p := events[0]; !p.Fired || p.Err != nil || p.Addr != "r2" || p.Lasted >= time.Hour {
		t.Errorf("pause: %+v; want fired on r2 and cut short without error", p)
	}
	if k := events[1]; k.Fired || !errors.Is(k.Err, ErrNotFired) {
		t.Errorf("kill: %+v; want not fired (ErrNotFired)", k)
	}
	if !slices.Equal(tgt.calls, []string{"pause r2", "resume r2"}) {
		t.Errorf("calls %q", tgt.calls)
	}
}

// A fault that fails is reported with its error; partition without a proxy fails, not panics.
func TestScheduleReportsFailures(t *testing.T) {
	tgt := &fakeTarget{fail: errors.New("no binary")}
	s := &Schedule{Faults: mustParse(t, "kill:replica3@0s", "kill:master@0s", "restart:master@20ms", "partition:master@0s+10ms"), Target: tgt}
	events := s.Run(context.Background(), time.Now())
	if e := events[0]; e.Fired || e.Err == nil {
		t.Errorf("kill:replica3 of 2: %+v; want an error, not fired", e)
	}
	if e := events[2]; !e.Fired || e.Err == nil || e.Err.Error() != "no binary" {
		t.Errorf("restart: %+v; want the target's error", e)
	}
	if e := events[3]; e.Err == nil {
		t.Errorf("partition without a Partitioner: %+v; want an error", e)
	}
}

// partitioner is a fake network proxy.
type partitioner struct {
	mu    sync.Mutex
	calls []string
}

func (p *partitioner) Partition(addr string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "partition "+addr)
	return nil
}

func (p *partitioner) Heal(addr string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "heal "+addr)
	return nil
}

// isolator is a fake topology that can cut a node off from its peers.
type isolator struct{ partitioner }

func (i *isolator) Isolate(_ context.Context, addr string) error { return i.Partition(addr) }
func (i *isolator) Rejoin(_ context.Context, addr string) error  { return i.Heal(addr) }

// Isolate goes to the Isolator, and the node rejoins when its time is up or the run ends; with
// no Isolator the fault fails.
func TestScheduleIsolate(t *testing.T) {
	iso := &isolator{}
	s := &Schedule{Faults: mustParse(t, "isolate:master@0s+20ms", "isolate:replica1@0s+1h"), Target: &fakeTarget{}, Isolator: iso}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	for _, ev := range s.Run(ctx, time.Now()) {
		if !ev.Fired || ev.Err != nil {
			t.Errorf("%+v", ev)
		}
	}
	if !sameSet(iso.calls, []string{"partition m", "heal m", "partition r1", "heal r1"}) {
		t.Errorf("calls %q", iso.calls)
	}
	s = &Schedule{Faults: mustParse(t, "isolate:master@0s+10ms"), Target: &fakeTarget{}}
	if ev := s.Run(context.Background(), time.Now())[0]; ev.Err == nil {
		t.Errorf("isolate without an Isolator: %+v; want an error", ev)
	}
}

// The partition hook: the schedule partitions the node and heals it, also when the run ends.
func TestSchedulePartitionHook(t *testing.T) {
	p := &partitioner{}
	s := &Schedule{Faults: mustParse(t, "partition:replica1@0s+20ms", "partition:master@0s+1h"), Target: &fakeTarget{}, Partitioner: p}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	events := s.Run(ctx, time.Now())
	for _, ev := range events {
		if !ev.Fired || ev.Err != nil {
			t.Errorf("%+v", ev)
		}
	}
	if !sameSet(p.calls, []string{"partition r1", "heal r1", "partition m", "heal m"}) {
		t.Errorf("calls %q", p.calls)
	}
}
