package adapter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
)

// ConfigFromEnv reads the deployment lockbench gave the adapter (extdriver.Env) into a
// drivers.Config. getenv nil means os.Getenv.
func ConfigFromEnv(getenv func(string) string) (drivers.Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg := drivers.Config{Topology: getenv(extdriver.EnvTopology), MasterName: getenv(extdriver.EnvMaster)}
	if a := getenv(extdriver.EnvAddrs); a != "" {
		cfg.Addrs = strings.Split(a, ",")
	}
	if len(cfg.Addrs) == 0 {
		return cfg, fmt.Errorf("adapter: %s is empty: run me from lockbench (--driver exec:NAME=COMMAND)", extdriver.EnvAddrs)
	}
	ms, err := strconv.ParseInt(getenv(extdriver.EnvLeaseMS), 10, 64)
	if err != nil && getenv(extdriver.EnvLeaseMS) != "" {
		return cfg, fmt.Errorf("adapter: %s: %v", extdriver.EnvLeaseMS, err)
	}
	cfg.Lease = time.Duration(ms) * time.Millisecond
	cfg.Concurrency, _ = strconv.Atoi(getenv(extdriver.EnvConcurrency))
	addrs := cfg.Addrs
	if db := getenv(extdriver.EnvDB); db != "" {
		// conn takes the database in a URL's path.
		scheme := "redis://"
		if getenv(extdriver.EnvTLS) == "1" {
			scheme = "rediss://"
		}
		addrs = make([]string, len(cfg.Addrs))
		for i, a := range cfg.Addrs {
			addrs[i] = scheme + a + "/" + db
		}
	}
	s, err := conn.New(conn.Options{Addrs: addrs, Topology: cfg.Topology, User: getenv(extdriver.EnvUser),
		TLS: getenv(extdriver.EnvTLS) == "1", CAFile: getenv(extdriver.EnvTLSCAFile),
		CertFile: getenv(extdriver.EnvTLSCertFile), KeyFile: getenv(extdriver.EnvTLSKeyFile),
		ServerName: getenv(extdriver.EnvTLSServerName), InsecureSkipVerify: getenv(extdriver.EnvTLSInsecure) == "1",
		SentinelUser: getenv(extdriver.EnvSentinelUser), Getenv: getenv})
	if err != nil {
		return cfg, err
	}
	cfg.Conn = s
	return cfg, nil
}

// LeaseFromEnv is extdriver.EnvLeaseMS as a duration; 0 when unset or bad.
func LeaseFromEnv() time.Duration {
	ms, _ := strconv.ParseInt(os.Getenv(extdriver.EnvLeaseMS), 10, 64)
	return time.Duration(ms) * time.Millisecond
}

// Driver is a Library over one of lockbench's built-in drivers: the same library measured in
// process and through the protocol shows what the protocol costs. One drivers.Worker per owner.
// Safe for concurrent use.
type Driver struct {
	d       drivers.Driver
	l       drivers.Locker
	mu      sync.Mutex
	workers map[string]drivers.Worker
}

var _ Library = (*Driver)(nil)

// OpenDriver opens d on cfg.
func OpenDriver(ctx context.Context, d drivers.Driver, cfg drivers.Config) (*Driver, error) {
	l, err := d.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Driver{d: d, l: l, workers: map[string]drivers.Worker{}}, nil
}

// Hello implements Library.
func (d *Driver) Hello() extdriver.Hello {
	s := d.l.Settings()
	lib := s["library"]
	if lib == "" {
		lib = s["client"]
	}
	kinds := []string{"mutex"}
	if d.d.Kinds().Has(drivers.KindReentrant) {
		kinds = append(kinds, "reentrant")
	}
	return extdriver.Hello{Library: d.d.Name() + " (lockbench's built-in driver)", Version: lib, Language: "go", Kinds: kinds}
}

func (d *Driver) worker(owner string) drivers.Worker {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.workers[owner]
	if w == nil {
		w = d.l.NewWorker()
		d.workers[owner] = w
	}
	return w
}

// Acquire implements Library.
func (d *Driver) Acquire(ctx context.Context, owner, name string) error {
	return d.worker(owner).Lock(ctx, name)
}

// Release implements Library.
func (d *Driver) Release(ctx context.Context, owner, name string) error {
	err := d.worker(owner).Unlock(ctx, name)
	if errors.Is(err, drivers.ErrNotHeld) {
		return fmt.Errorf("%w: %v", ErrNotOwner, err)
	}
	return err
}

// Close closes the driver's clients.
func (d *Driver) Close() error { return d.l.Close() }
