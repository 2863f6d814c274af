// Package compose starts and describes the Redis deployments lockbench runs against. The default
// is native redis-server processes, private to the caller, on free loopback ports, so that a first
// run (and every test) needs nothing but redis-server on PATH.
package compose

// Topology is a running Redis deployment that lockbench can drive and later tear down. Methods of
// the implementations in this package are safe for concurrent use.
type Topology interface {
	// Kind names the deployment shape, e.g. "single"; drivers pick their client mode by it.
	Kind() string
	// Addrs returns the host:port addresses clients connect to. The caller owns the slice.
	Addrs() []string
	// Describe returns every node and its role, for result files and `lockbench up`.
	Describe() Description
	// Close stops whatever the topology started and waits for it to be gone.
	Close() error
}

// Topology kinds, as returned by Topology.Kind and recorded in Description.Kind.
const (
	// KindSingle is one standalone Redis server.
	KindSingle = "single"
	// KindSentinel is one master with replicas, monitored by Redis Sentinels; clients connect
	// to the sentinels and ask them for the master.
	KindSentinel = "sentinel"
	// KindCluster is a Redis Cluster; clients connect to any node and follow the slot map.
	KindCluster = "cluster"
	// KindMasters is N independent standalone masters, the deployment RedLock is made for.
	KindMasters = "masters"
)

// Node roles, as recorded in Node.Role. They use Redis's own words (INFO replication) so that a
// description of a started topology reads the same as one read from a live deployment.
const (
	// RoleMaster is a node that accepts writes.
	RoleMaster = "master"
	// RoleReplica is a node that replicates a master (INFO says "slave").
	RoleReplica = "replica"
	// RoleSentinel is a Redis Sentinel process.
	RoleSentinel = "sentinel"
)

// Description is a plain-value snapshot of a topology, safe to copy, encode and share between
// goroutines.
type Description struct {
	// Kind is the topology kind, e.g. "single".
	Kind string `json:"kind"`
	// MasterName is the name sentinels know the master by; set only for KindSentinel.
	MasterName string `json:"master_name,omitempty"`
	// Nodes lists every server of the topology.
	Nodes []Node `json:"nodes"`
}

// Node is one server of a Description; a plain value, safe to copy and share.
type Node struct {
	// Addr is the node's host:port.
	Addr string `json:"addr"`
	// Role is the node's role, e.g. "master".
	Role string `json:"role"`
}
