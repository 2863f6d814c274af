package extdriver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
)

// bound keeps a test that would hang from hanging: the failure it guards is "nothing hangs".
const bound = 20 * time.Second

// selfOptions runs the test binary as the null adapter with fault ("" for none).
func selfOptions(fault string, env ...string) extdriver.Options {
	return extdriver.Options{Name: "self", Argv: []string{os.Args[0]},
		Env:         append([]string{envSelf + "=1", envFault + "=" + fault}, env...),
		HangTimeout: time.Second, PingInterval: 100 * time.Millisecond, ShutdownGrace: 5 * time.Second}
}

func start(t testing.TB, opt extdriver.Options) *extdriver.Adapter {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	a, err := extdriver.Start(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestExclusionInFlight: many owners at once on few locks through one adapter; the test counts
// holders between the grant it got and the release it sent, as lockbench does.
func TestExclusionInFlight(t *testing.T) {
	a := start(t, selfOptions(""))
	const owners, keys, rounds = 32, 4, 200
	var inside [keys]atomic.Int32
	var violations, grants atomic.Int64
	var wg sync.WaitGroup
	for o := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("o%d", o)
			for i := range rounds {
				k := (o + i) % keys
				name := fmt.Sprintf("k%d", k)
				ok, err := a.Acquire(context.Background(), owner, name, -1)
				if err != nil || !ok {
					t.Errorf("acquire %s %s: %v %v", owner, name, ok, err)
					return
				}
				grants.Add(1)
				if inside[k].Add(1) != 1 {
					violations.Add(1)
				}
				inside[k].Add(-1)
				if err := a.Release(owner, name); err != nil {
					t.Errorf("release %s %s: %v", owner, name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if violations.Load() != 0 || grants.Load() != owners*rounds {
		t.Fatalf("%d violations in %d grants (want 0 in %d)", violations.Load(), grants.Load(), owners*rounds)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("clean shutdown: %v", err)
	}
}

// TestReplies: timeout, notowner and reentrancy come back as themselves.
func TestReplies(t *testing.T) {
	a := start(t, selfOptions(""))
	ctx := context.Background()
	if ok, err := a.Acquire(ctx, "a", "k", -1); !ok || err != nil {
		t.Fatalf("a acquires k: %v %v", ok, err)
	}
	if ok, err := a.Acquire(ctx, "b", "k", 50*time.Millisecond); ok || err != nil {
		t.Fatalf("b acquires held k with a 50ms wait: %v %v; want timeout (false, nil)", ok, err)
	}
	if err := a.Release("b", "k"); !errors.Is(err, drivers.ErrNotHeld) {
		t.Fatalf("b releases a's k: %v; want ErrNotHeld", err)
	}
	if ok, err := a.Acquire(ctx, "a", "k", 0); !ok || err != nil {
		t.Fatalf("a takes k again (reentrant): %v %v", ok, err)
	}
	for range 2 {
		if err := a.Release("a", "k"); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Release("a", "k"); !errors.Is(err, drivers.ErrNotHeld) {
		t.Fatalf("a releases k a third time: %v; want ErrNotHeld", err)
	}
	if h := a.Hello(); h.Protocol != extdriver.Protocol || !strings.Contains(h.Library, "null adapter") {
		t.Fatalf("hello %+v", h)
	}
}

// TestCancel: a waiter whose context ends gets its error back, and holds nothing afterwards.
func TestCancel(t *testing.T) {
	a := start(t, selfOptions(""))
	if ok, err := a.Acquire(context.Background(), "a", "k", -1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.Acquire(ctx, "b", "k", -1)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	if err := a.Release("a", "k"); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.Acquire(context.Background(), "c", "k", 0); !ok || err != nil {
		t.Fatalf("after the cancelled waiter, c cannot take k at once: %v %v (b holds it?)", ok, err)
	}
}

// failAt runs acquires until the adapter fails, and returns the error.
func failAt(t *testing.T, a *extdriver.Adapter) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	for i := 0; ; i++ {
		name := fmt.Sprintf("k%d", i)
		ok, err := a.Acquire(ctx, "a", name, -1)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("the adapter's failure was not seen within %v", bound)
			}
			return err
		}
		if ok {
			if err := a.Release("a", name); err != nil {
				return err
			}
		}
	}
}

// TestAdapterFailures: an adapter that dies, hangs or writes garbage fails the operation in
// flight and every one after with ErrAdapter, a reason and its stderr tail.
func TestAdapterFailures(t *testing.T) {
	for _, c := range []struct {
		fault string
		want  []string
	}{
		{"die-after=3", []string{"exit status 3", "fault die-after=3: exiting"}},
		{"hang-after=3", []string{"did not answer a ping within 1s: hung", "fault hang-after=3: stopping"}},
		{"garbage-after=3", []string{"not a protocol line", "garbage, not a reply", "fault garbage-after=3"}},
	} {
		t.Run(c.fault, func(t *testing.T) {
			a := start(t, selfOptions(c.fault))
			err := failAt(t, a)
			if !errors.Is(err, extdriver.ErrAdapter) {
				t.Fatalf("%v; want ErrAdapter", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			if _, err2 := a.Acquire(context.Background(), "b", "x", -1); !errors.Is(err2, extdriver.ErrAdapter) {
				t.Errorf("after the failure: %v; want ErrAdapter at once", err2)
			}
		})
	}
}

// TestStartFailures: no hello, a bad hello and a missing program are errors at Start that
// quote the adapter.
func TestStartFailures(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want []string
	}{
		{[]string{"sh", "-c", "echo cannot import redis >&2; exit 7"}, []string{"before its hello", "exit status 7", "cannot import redis"}},
		{[]string{"sh", "-c", "echo '{\"protocol\":1}'"}, []string{"must be \"hello \""}},
		{[]string{"sh", "-c", "sleep 30"}, []string{"no hello line within 300ms"}},
		{[]string{"/nonexistent/adapter"}, []string{"/nonexistent/adapter"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		a, err := extdriver.Start(ctx, extdriver.Options{Name: "t", Argv: c.argv, HelloTimeout: 300 * time.Millisecond})
		cancel()
		if err == nil {
			a.Close()
			t.Errorf("%q started", c.argv)
			continue
		}
		if !errors.Is(err, extdriver.ErrAdapter) {
			t.Errorf("%q: %v; want ErrAdapter", c.argv, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error does not say %q:\n%v", c.argv, w, err)
			}
		}
	}
}

// TestUncleanShutdown: an adapter that does not exit when its stdin closes is killed and named.
func TestUncleanShutdown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	a, err := extdriver.Start(ctx, extdriver.Options{Name: "t", ShutdownGrace: 200 * time.Millisecond,
		Argv: []string{"sh", "-c", `echo 'hello {"protocol":1,"library":"stubborn","kinds":["mutex"]}'; trap '' TERM; sleep 30 </dev/null`}})
	if err != nil {
		t.Fatal(err)
	}
	err = a.Close()
	if !errors.Is(err, extdriver.ErrAdapter) || !strings.Contains(err.Error(), "still running 200ms after its stdin closed; killed") {
		t.Fatalf("Close: %v", err)
	}
}

// TestStuckRelease: an adapter that answers pings but never a release does not keep the worker:
// the release fails with ErrNoReply after ReplyTimeout, and the adapter goes on.
func TestStuckRelease(t *testing.T) {
	const script = `import sys
print('hello {"protocol":1,"library":"stuck","kinds":["mutex"]}', flush=True)
for line in sys.stdin:
    f = line.split()
    if f[1] in ("ping", "acquire"):
        print(f[0], "ok", flush=True)
`
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	a := start(t, extdriver.Options{Name: "stuck", Argv: []string{py, "-c", script}, ReplyTimeout: 300 * time.Millisecond,
		PingInterval: 50 * time.Millisecond, HangTimeout: 5 * time.Second})
	if ok, err := a.Acquire(context.Background(), "a", "k", -1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := a.Release("a", "k"); !errors.Is(err, extdriver.ErrNoReply) {
		t.Fatalf("release with no reply: %v; want ErrNoReply", err)
	}
	if ok, err := a.Acquire(context.Background(), "a", "k2", -1); !ok || err != nil || a.Err() != nil {
		t.Fatalf("after a stuck release the adapter should go on: %v %v %v", ok, err, a.Err())
	}
}
