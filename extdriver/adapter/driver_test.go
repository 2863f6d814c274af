package adapter_test

import (
	"testing"

	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/extdriver/adapter"
)

// TestConfigFromEnv: what lockbench puts in the environment (extdriver.Env) comes back as the
// connection a Go adapter opens, the password included.
func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{
		extdriver.EnvTopology: "sentinel", extdriver.EnvAddrs: "127.0.0.1:26379,127.0.0.1:26380",
		extdriver.EnvMaster: "orders", extdriver.EnvLeaseMS: "1500", extdriver.EnvConcurrency: "16",
		extdriver.EnvUser: "bench", extdriver.EnvPassword: "pw", extdriver.EnvDB: "3", extdriver.EnvTLS: "1",
	}
	cfg, err := adapter.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Conn
	switch {
	case cfg.Topology != "sentinel" || cfg.MasterName != "orders" || len(cfg.Addrs) != 2:
		t.Errorf("deployment: %+v", cfg)
	case cfg.Lease.Milliseconds() != 1500 || cfg.Concurrency != 16:
		t.Errorf("lease %v, concurrency %d", cfg.Lease, cfg.Concurrency)
	case c.User() != "bench" || !c.HasPassword() || c.DB() != 3 || !c.TLS():
		t.Errorf("connection: user %q, password %v, db %d, tls %v", c.User(), c.HasPassword(), c.DB(), c.TLS())
	}
	if _, err := adapter.ConfigFromEnv(func(string) string { return "" }); err == nil {
		t.Error("no addresses accepted")
	}
}
