// Command redsync is an external-driver adapter over lockbench's built-in redsync driver
// (github.com/go-redsync/redsync/v4): the same library measured in process (--driver redsync)
// and through the protocol (--driver 'exec:redsync-exec=/tmp/redsync-adapter') shows what the
// protocol costs.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver/adapter"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "redsync adapter:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := adapter.ConfigFromEnv(nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	lib, err := adapter.OpenDriver(ctx, drivers.RedsyncDriver{}, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer lib.Close()
	return adapter.Serve(os.Stdin, os.Stdout, lib)
}
