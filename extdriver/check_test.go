package extdriver_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/referee"
)

// checkSelf runs driver-check on the test binary as adapter kind with fault.
func checkSelf(t *testing.T, kind, fault string, cfg drivers.Config, m extdriver.Marker) ([]extdriver.Failure, string) {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 4*bound)
	defer cancel()
	fails, err := extdriver.Check(ctx, extdriver.CheckOptions{
		Spec: "exec:" + kind + "=" + os.Args[0], Config: cfg, Marker: m, Duration: 500 * time.Millisecond, Out: &out,
		Process: func(o *extdriver.Options) {
			o.Env = append(o.Env, envSelf+"="+kind, envFault+"="+fault)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return fails, out.String()
}

func TestCheckPassesNull(t *testing.T) {
	fails, out := checkSelf(t, "null", "", drivers.Config{Addrs: []string{"127.0.0.1:1"}}, nil)
	if len(fails) != 0 {
		t.Fatalf("the null adapter fails driver-check:\n%s", out)
	}
	for _, rule := range []string{"hello", "exclusion", "non-owner-release", "wait-timeout", "reentrant", "rw", "multi", "fenced", "lease-expiry", "shutdown"} {
		if !strings.Contains(out, "ok   "+rule+"\n") {
			t.Errorf("rule %s not checked:\n%s", rule, out)
		}
	}
}

// TestCheckPassesRedsync: the redsync adapter on a real Redis, every holder marked on a referee
// of its own as a run marks them.
func TestCheckPassesRedsync(t *testing.T) {
	data, ref := redistest.NewServer(t), redistest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	r, err := referee.Open(ctx, referee.Options{Addr: ref.Addr(), RunID: "check-test", Process: "p"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fails, out := checkSelf(t, "redsync", "", drivers.Config{Topology: compose.KindSingle, Addrs: data.Addrs()}, r)
	if len(fails) != 0 {
		t.Fatalf("the redsync adapter fails driver-check:\n%s", out)
	}
	if res := r.Result(); res.Entries == 0 || res.Violations != 0 || res.Errors != 0 {
		t.Fatalf("referee: %+v; want entries, no violation, no error", res)
	}
}

// TestCheckFailsNoLock: an adapter that grants without locking fails, named by rule and
// operation; the referee sees the overlaps too.
func TestCheckFailsNoLock(t *testing.T) {
	ref := redistest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	r, err := referee.Open(ctx, referee.Options{Addr: ref.Addr(), RunID: "nolock-test", Process: "p"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fails, out := checkSelf(t, "null", "nolock", drivers.Config{Addrs: []string{"127.0.0.1:1"}}, r)
	rules := map[string]extdriver.Failure{}
	for _, f := range fails {
		rules[f.Rule] = f
	}
	ex, ok := rules["exclusion"]
	if !ok || !strings.Contains(ex.Op, "acquire owner=") || !strings.Contains(ex.Detail, "other owner(s) held") {
		t.Fatalf("exclusion not failed, or not named:\n%s", out)
	}
	if no, ok := rules["non-owner-release"]; !ok || !strings.Contains(no.Detail, "answered ok, want notowner") {
		t.Fatalf("non-owner-release not failed:\n%s", out)
	}
	if res := r.Result(); res.Violations == 0 {
		t.Fatalf("the referee saw no violation: %+v", res)
	}
}

// TestCheckFailsDying: an adapter that dies mid-check is a failure naming the operation and
// the exit, not a hang.
func TestCheckFailsDying(t *testing.T) {
	fails, out := checkSelf(t, "null", "die-after=20", drivers.Config{Addrs: []string{"127.0.0.1:1"}}, nil)
	if len(fails) == 0 || fails[0].Rule != "exclusion" || !strings.Contains(fails[0].Detail, "exit status 3") {
		t.Fatalf("want exclusion failed with the exit status:\n%s", out)
	}
}

// TestCheckFailsBadKinds: an adapter whose read-write lock lets a writer in beside readers,
// whose multi-lock keeps the names it took before one was refused, and whose fencing tokens do
// not increase fails the rw, multi and fenced rules, each named with its operation.
func TestCheckFailsBadKinds(t *testing.T) {
	fails, out := checkSelf(t, "badkinds", "", drivers.Config{Addrs: []string{"127.0.0.1:1"}}, nil)
	want := map[string]string{
		"rw":     "wacquire owner=c",
		"multi":  "acquire owner=c",
		"fenced": "tokens must increase",
	}
	for _, f := range fails {
		if w, ok := want[f.Rule]; ok && strings.Contains(f.Error(), w) {
			delete(want, f.Rule)
		}
	}
	if len(want) > 0 {
		t.Fatalf("rules not failed as they should (%v):\n%s", want, out)
	}
	for _, rule := range []string{"exclusion", "non-owner-release", "reentrant"} {
		if !strings.Contains(out, "ok   "+rule+"\n") {
			t.Errorf("rule %s should still hold (the mutex is right):\n%s", rule, out)
		}
	}
}
