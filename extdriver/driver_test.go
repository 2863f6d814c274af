package extdriver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
)

// selfDriver is the exec driver over the test binary run as adapter kind ("null", "redsync").
func selfDriver(t *testing.T, kind string) *extdriver.Driver {
	t.Helper()
	d, err := extdriver.New("exec:" + kind + "=" + os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	d.Options = func(o *extdriver.Options) { o.Env = append(o.Env, envSelf+"="+kind) }
	return d
}

// TestRedsyncAdapter: the redsync adapter against a real Redis, through the exec driver as a
// run uses it: workers contend on a few locks and the test counts holders.
func TestRedsyncAdapter(t *testing.T) {
	srv := redistest.NewServer(t)
	cfg := drivers.Config{Topology: compose.KindSingle, Addrs: srv.Addrs(), Concurrency: 8}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	l, err := selfDriver(t, "redsync").Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if lib := l.Settings()["library"]; !strings.Contains(lib, "redsync") {
		t.Fatalf("settings name library %q", lib)
	}
	var inside [2]atomic.Int32
	var violations atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := l.NewWorker()
			for i := range 50 {
				k := (w + i) % 2
				name := fmt.Sprintf("lockbench:test:%d", k)
				if err := wk.Lock(ctx, name); err != nil {
					t.Error(err)
					return
				}
				if inside[k].Add(1) != 1 {
					violations.Add(1)
				}
				inside[k].Add(-1)
				if err := wk.Unlock(ctx, name); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if violations.Load() != 0 {
		t.Fatalf("%d violations", violations.Load())
	}
	// A release by a worker that does not hold the lock is refused, in Redis's terms.
	a, b := l.NewWorker(), l.NewWorker()
	if err := a.Lock(ctx, "lockbench:test:x"); err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(ctx, "lockbench:test:x"); !errors.Is(err, drivers.ErrNotHeld) {
		t.Fatalf("non-owner release: %v; want ErrNotHeld", err)
	}
	if err := a.Unlock(ctx, "lockbench:test:x"); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("clean shutdown: %v", err)
	}
}

// TestUnsupportedKind: a workload needing a kind the hello does not claim is ErrUnsupported.
func TestUnsupportedKind(t *testing.T) {
	d, err := extdriver.New(`exec:m=sh -c 'echo "hello {\"protocol\":1,\"library\":\"m\",\"kinds\":[\"mutex\"]}"; cat >/dev/null'`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Open(context.Background(), drivers.Config{Addrs: []string{"127.0.0.1:1"}, Needs: drivers.KindReentrant})
	if !errors.Is(err, drivers.ErrUnsupported) {
		t.Fatalf("Open needing reentrant from a mutex adapter: %v; want ErrUnsupported", err)
	}
}

// TestPasswordStaysSecret: the password reaches the adapter in its environment, and a failure
// that quotes the adapter's stderr shows *** in its place.
func TestPasswordStaysSecret(t *testing.T) {
	const secret = "s3cret-pw-41"
	s, err := conn.New(conn.Options{Addrs: []string{"127.0.0.1:1"}, Getenv: func(k string) string {
		if k == conn.EnvPassword {
			return secret
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := extdriver.New(`exec:leaky=sh -c "echo connecting with $LOCKBENCH_REDIS_PASSWORD >&2; exit 1"`)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	_, err = d.Open(ctx, drivers.Config{Addrs: s.Addrs(), Conn: s})
	if err == nil {
		t.Fatal("the adapter that exits started")
	}
	if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "connecting with ***") {
		t.Fatalf("error does not hide the password (or did not reach the adapter): %v", err)
	}
	if strings.Contains(d.Name(), secret) {
		t.Fatal("the password is in the driver's name")
	}
}

// TestExternalCPU: the adapter's CPU is read, so that lockbench can count it as client CPU.
func TestExternalCPU(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	l, err := selfDriver(t, "null").Open(ctx, drivers.Config{Addrs: []string{"127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := l.NewWorker()
	for i := range 2000 {
		name := fmt.Sprint("k", i)
		if err := w.Lock(ctx, name); err != nil {
			t.Fatal(err)
		}
		if err := w.Unlock(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	cpu, ok := l.(drivers.CPULocker).ExternalCPU()
	if !ok || cpu <= 0 {
		t.Fatalf("ExternalCPU = %v, %v after 2000 cycles; want a positive time", cpu, ok)
	}
}
