package extdriver

import (
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/drivers"
)

// The environment an adapter is started with: which Redis to use and how. Secrets travel only
// here, never on its command line (which every user sees in ps) nor in results or messages.
const (
	// EnvProtocol is the protocol version lockbench speaks.
	EnvProtocol = "LOCKBENCH_PROTOCOL"
	// EnvTopology is single, sentinel, cluster or masters.
	EnvTopology = "LOCKBENCH_REDIS_TOPOLOGY"
	// EnvAddrs is the addresses, comma separated: host:port (or a Unix socket path).
	EnvAddrs = "LOCKBENCH_REDIS_ADDRS"
	// EnvMaster is the sentinel master name.
	EnvMaster = "LOCKBENCH_REDIS_MASTER"
	// EnvUser is the ACL user, when not the default one.
	EnvUser = "LOCKBENCH_REDIS_USER"
	// EnvPassword is the password, when there is one (conn.EnvPassword).
	EnvPassword = conn.EnvPassword
	// EnvDB is the database number, when not 0.
	EnvDB = "LOCKBENCH_REDIS_DB"
	// EnvTLS is "1" when the servers speak TLS (verified against the system's roots).
	EnvTLS = "LOCKBENCH_REDIS_TLS"
	// EnvLeaseMS is the lock lease in milliseconds; 0 means the library's default.
	EnvLeaseMS = "LOCKBENCH_LEASE_MS"
	// EnvConcurrency is how many owners will have operations in flight at once.
	EnvConcurrency = "LOCKBENCH_CONCURRENCY"
)

// Env returns the adapter environment for cfg, NAME=value.
func Env(cfg drivers.Config) []string {
	topo := cfg.Topology
	if topo == "" {
		topo = "single"
	}
	env := []string{
		EnvProtocol + "=" + strconv.Itoa(Protocol),
		EnvTopology + "=" + topo,
		EnvAddrs + "=" + strings.Join(cfg.Addrs, ","),
		EnvLeaseMS + "=" + strconv.FormatInt(cfg.Lease.Milliseconds(), 10),
		EnvConcurrency + "=" + strconv.Itoa(max(cfg.Concurrency, 1)),
	}
	if cfg.MasterName != "" {
		env = append(env, EnvMaster+"="+cfg.MasterName)
	}
	if c := cfg.Conn; c != nil {
		if c.User() != "" {
			env = append(env, EnvUser+"="+c.User())
		}
		if c.DB() > 0 {
			env = append(env, EnvDB+"="+strconv.Itoa(c.DB()))
		}
		if c.TLS() {
			env = append(env, EnvTLS+"=1")
		}
		for _, kv := range c.Env() {
			if strings.HasPrefix(kv, conn.EnvPassword+"=") {
				env = append(env, kv)
			}
		}
	}
	return env
}
