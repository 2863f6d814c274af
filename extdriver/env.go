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
	// EnvTLS is "1" when the servers speak TLS: verified against the system's roots unless
	// EnvTLSCAFile names a CA, or EnvTLSInsecure is "1".
	EnvTLS = "LOCKBENCH_REDIS_TLS"
	// EnvTLSCAFile is the CA certificate (PEM) that verifies the servers' certificates
	// (--tls-ca-file), an absolute path; unset for the system's roots.
	EnvTLSCAFile = "LOCKBENCH_REDIS_TLS_CA_FILE"
	// EnvTLSCertFile and EnvTLSKeyFile are the client certificate and key (PEM) for mutual
	// TLS (--tls-cert-file, --tls-key-file), absolute paths; both or neither.
	EnvTLSCertFile = "LOCKBENCH_REDIS_TLS_CERT_FILE"
	EnvTLSKeyFile  = "LOCKBENCH_REDIS_TLS_KEY_FILE"
	// EnvTLSServerName is the name the servers' certificates must carry (--tls-server-name);
	// unset for the dialled host.
	EnvTLSServerName = "LOCKBENCH_REDIS_TLS_SERVER_NAME"
	// EnvTLSInsecure is "1" when the servers' certificates are not to be checked
	// (--tls-insecure-skip-verify).
	EnvTLSInsecure = "LOCKBENCH_REDIS_TLS_INSECURE"
	// EnvSentinelUser is the sentinels' own ACL user (--sentinel-user); their password is in
	// EnvSentinelPassword.
	EnvSentinelUser = "LOCKBENCH_SENTINEL_USER"
	// EnvSentinelPassword is the sentinels' own password, when they have one
	// (conn.EnvSentinelPassword).
	EnvSentinelPassword = conn.EnvSentinelPassword
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
			f := c.TLSFiles()
			for _, kv := range [...][2]string{{EnvTLSCAFile, f.CAFile}, {EnvTLSCertFile, f.CertFile}, {EnvTLSKeyFile, f.KeyFile}, {EnvTLSServerName, f.ServerName}} {
				if kv[1] != "" {
					env = append(env, kv[0]+"="+kv[1])
				}
			}
			if f.InsecureSkipVerify {
				env = append(env, EnvTLSInsecure+"=1")
			}
		}
		if u := c.SentinelUser(); u != "" {
			env = append(env, EnvSentinelUser+"="+u)
		}
		// The passwords, data nodes' and sentinels', travel here only (conn.Settings.Env).
		for _, kv := range c.Env() {
			if strings.HasPrefix(kv, conn.EnvPassword+"=") || strings.HasPrefix(kv, conn.EnvSentinelPassword+"=") {
				env = append(env, kv)
			}
		}
	}
	return env
}
