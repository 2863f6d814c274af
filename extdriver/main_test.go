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
