package extdriver_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver/adapter"
	"go.uber.org/goleak"
)

// envSelf, set, makes the test binary an adapter: "redsync" the redsync adapter, else the null
// adapter (with the fault in envFault), so that
// tests start a real adapter process without building one.
const (
	envSelf  = "EXTDRIVER_TEST_ADAPTER"
	envFault = "EXTDRIVER_TEST_FAULT"
)

// TestMain runs the adapter when asked to, else the tests, failing the package if one leaves a
// goroutine running.
func TestMain(m *testing.M) {
	if os.Getenv(envSelf) != "" {
		var lib adapter.Library
		var err error
		if os.Getenv(envSelf) == "redsync" { // what adapters/redsync runs
			var cfg drivers.Config
			if cfg, err = adapter.ConfigFromEnv(nil); err == nil {
				var d *adapter.Driver
				d, err = adapter.OpenDriver(context.Background(), drivers.RedsyncDriver{}, cfg)
				lib = d
			}
		} else if m := os.Getenv(envSelf); m == "tokens" || m == "tokens-declared" {
			lib, err = newTokens(m == "tokens-declared")
		} else if m := os.Getenv(envSelf); m == "fifo" || m == "lifo" {
			lib = newOrdered(adapter.NewMemory(adapter.LeaseFromEnv()), m == "lifo")
		} else if os.Getenv(envSelf) == "badkinds" {
			lib = badKinds{adapter.NewMemory(adapter.LeaseFromEnv())}
		} else {
			lib, err = adapter.WithFault(adapter.NewMemory(adapter.LeaseFromEnv()), os.Getenv(envFault))
		}
		if err == nil {
			err = adapter.Serve(os.Stdin, os.Stdout, lib)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// badKinds breaks the kinds beyond the mutex, for driver-check to catch: its write lock is a
// read hold (shared), its multi-lock takes the names one by one and keeps them when one is
// refused, and its fencing token is always 1.
type badKinds struct{ *adapter.Memory }

func (b badKinds) AcquireWrite(ctx context.Context, owner, name string) error {
	return b.Memory.AcquireRead(ctx, owner, name)
}

func (b badKinds) ReleaseWrite(ctx context.Context, owner, name string) error {
	return b.Memory.ReleaseRead(ctx, owner, name)
}

func (b badKinds) AcquireMulti(ctx context.Context, owner string, names []string) error {
	for _, n := range names {
		if err := b.Memory.Acquire(ctx, owner, n); err != nil {
			return err
		}
	}
	return nil
}

func (b badKinds) AcquireFenced(ctx context.Context, owner, name string) (int64, error) {
	_, err := b.Memory.AcquireFenced(ctx, owner, name)
	return 1, err
}

func (b badKinds) TryAcquireFenced(owner, name string) (bool, int64, error) {
	ok, _, err := b.Memory.TryAcquireFenced(owner, name)
	return ok, 1, err
}
