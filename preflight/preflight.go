// Package preflight records what a lock benchmark is measured against and warns where the
// deployment itself makes locks unsafe: each data node's version, mode, eviction policy,
// persistence, replicas, client limit and round trip, read with INFO, CONFIG GET and PING
// over a connection the caller opened (with its credentials and TLS).
package preflight

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// unknown is RDBSave when CONFIG GET was refused.
const unknown = "unknown"

// Pings is how many PINGs Inspect sends, one at a time, for the round trip.
const Pings = 10

// Inspect reads the preflight of the data node at addr, whose role the caller knows, over c
// (a single-node client). CONFIG GET may be refused to a least-privilege user: the save
// schedule is then "unknown", AOF is what INFO persistence says, and Warnings says so. It is safe for concurrent use with distinct nodes.
func Inspect(ctx context.Context, c rueidis.Client, addr, role string) (results.DeploymentNode, error) {
	n := results.DeploymentNode{Addr: addr, Role: role}
	info := map[string]string{}
	for _, section := range []string{"server", "memory", "persistence", "clients", "replication"} {
		text, err := c.Do(ctx, c.B().Info().Section(section).Build()).ToString()
		if err != nil {
			return n, fmt.Errorf("preflight: INFO %s on %s: %w", section, addr, err)
		}
		for line := range strings.SplitSeq(text, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				info[k] = v
			}
		}
	}
	n.Version, n.Mode = info["redis_version"], info["redis_mode"]
	n.Maxmemory, _ = strconv.ParseInt(info["maxmemory"], 10, 64)
	n.MaxmemoryPolicy = info["maxmemory_policy"]
	n.AOF = info["aof_enabled"] == "1"
	n.Replicas, _ = strconv.Atoi(info["connected_slaves"])
	n.MaxClients, _ = strconv.Atoi(info["maxclients"])
	n.ConnectedClients, _ = strconv.Atoi(info["connected_clients"])
	n.RDBSave = unknown
	if cfg, err := c.Do(ctx, c.B().ConfigGet().Parameter("save", "appendfsync").Build()).AsStrMap(); err == nil {
		n.RDBSave, n.AOFFsync = cfg["save"], cfg["appendfsync"]
	}
	var rtts []time.Duration
	for range Pings {
		start := time.Now()
		if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
			return n, fmt.Errorf("preflight: PING %s: %w", addr, err)
		}
		rtts = append(rtts, time.Since(start))
	}
	slices.Sort(rtts)
	n.PingRTTMinUS = float64(rtts[0].Nanoseconds()) / 1e3
	n.PingRTTMedianUS = float64(rtts[len(rtts)/2].Nanoseconds()) / 1e3
	return n, nil
}

// Warnings says where nodes make locks unsafe or a run of concurrency clients per driver
// unrepresentative; kind is the topology kind ("single", "sentinel", …).
func Warnings(nodes []results.DeploymentNode, kind string, concurrency int) []string {
	var w []string
	versions := map[string]bool{}
	for _, n := range nodes {
		versions[n.Version] = true
		if n.Maxmemory > 0 && n.MaxmemoryPolicy != "noeviction" {
			w = append(w, fmt.Sprintf("%s: maxmemory-policy %s with maxmemory %d: when memory runs out Redis evicts keys, lock keys too (they have a TTL), and a held lock vanishes; locks want noeviction", n.Addr, n.MaxmemoryPolicy, n.Maxmemory))
		}
		if n.Role == "master" {
			w = append(w, persistenceWarnings(n)...)
			w = append(w, replicationWarnings(n, kind)...)
		} else if n.RDBSave == unknown {
			w = append(w, n.Addr+": CONFIG GET is not allowed (a least-privilege user: NOPERM), so its persistence is unknown; check CONFIG GET save appendonly appendfsync as an admin")
		}
		if n.MaxClients > 0 && n.MaxClients-n.ConnectedClients < concurrency+16 {
			w = append(w, fmt.Sprintf("%s: maxclients %d with %d connected leaves room for %d: a run of %d workers per driver may be refused connections", n.Addr, n.MaxClients, n.ConnectedClients, n.MaxClients-n.ConnectedClients, concurrency))
		}
	}
	if len(versions) > 1 {
		w = append(w, "the nodes run different Redis versions")
	}
	return w
}

// persistenceWarnings says what a master forgets when it restarts: a restarted master that has
// forgotten a grant grants the lock again while its holder still works under it.
func persistenceWarnings(n results.DeploymentNode) []string {
	const rejoin = "keep it down for the longest lease before it rejoins, or turn on AOF with appendfsync always"
	switch {
	case n.RDBSave == unknown && n.AOF:
		// INFO persistence tells aof_enabled, but not appendfsync.
		return []string{n.Addr + ": CONFIG GET is not allowed (a least-privilege user: NOPERM), so appendfsync is unknown (INFO says appendonly yes): unless it is always, a crash can lose the last grants; check CONFIG GET appendfsync as an admin"}
	case n.RDBSave == unknown:
		// INFO says appendonly no; the save schedule is not in INFO. With snapshots or none,
		// a restart loses grants either way.
		return []string{n.Addr + ": CONFIG GET is not allowed (a least-privilege user: NOPERM), so the save schedule is unknown, and INFO says appendonly no: a restarted master loses every grant since its last RDB snapshot, or all of them if it has none; " + rejoin}
	case !n.AOF && n.RDBSave == "":
		return []string{n.Addr + ": no persistence (appendonly no, no save): a restarted master has forgotten every held lock; " + rejoin}
	case !n.AOF:
		return []string{fmt.Sprintf("%s: RDB snapshots only (save %s, appendonly no): a restart loses every grant since the last snapshot, so a restarted master may grant a lock that is held; %s", n.Addr, n.RDBSave, rejoin)}
	case n.AOFFsync != "always" && n.AOFFsync != "":
		return []string{fmt.Sprintf("%s: appendfsync %s: a crash can lose the last grants (up to a second), so a restarted master may grant a lock that is held", n.Addr, n.AOFFsync)}
	}
	return nil
}

// replicationWarnings says what a master's replicas, or their absence, mean for its locks.
func replicationWarnings(n results.DeploymentNode, kind string) []string {
	switch {
	case kind == "cluster" && n.Replicas == 0:
		// No replica: nothing to fail over to, so no lost grant by promotion, but the slots
		// stay down with the master.
		return []string{n.Addr + ": a cluster master with 0 replicas: if it fails, its slots (and the locks on them) are lost with it, and the cluster cannot serve them until it returns with what it persisted"}
	case n.Replicas > 0 || kind == "sentinel" || kind == "cluster":
		return []string{n.Addr + ": replication is asynchronous: a fail-over can promote a replica that never saw a grant, and two clients hold the lock"}
	}
	return nil
}

// SentinelWarnings reads how the sentinel at addr (over c, a single-node client with the
// sentinels' credentials) monitors master and says where that makes fail-overs hasty: a quorum
// of 1 lets one sentinel's view alone mark the master down. It is safe for concurrent use.
func SentinelWarnings(ctx context.Context, c rueidis.Client, addr, master string) ([]string, error) {
	f, err := c.Do(ctx, c.B().Arbitrary("SENTINEL", "MASTER").Args(master).Build()).AsStrMap()
	if err != nil {
		return nil, fmt.Errorf("preflight: SENTINEL MASTER %s on %s: %w", master, addr, err)
	}
	quorum, _ := strconv.Atoi(f["quorum"])
	others, _ := strconv.Atoi(f["num-other-sentinels"])
	var w []string
	if quorum == 1 {
		w = append(w, fmt.Sprintf("%s: sentinel quorum 1 for master %s (%d sentinels): one sentinel that loses sight of the master (a partition, a pause) is enough to mark it down and start a fail-over, and the promoted replica may grant locks the old master still holds; set the quorum to a majority of the sentinels", addr, master, others+1))
	}
	return w, nil
}

// Write prints d for people: one line per node, then the warnings.
func Write(out io.Writer, d *results.Deployment) error {
	var b strings.Builder
	for _, n := range d.Nodes {
		persistence := "none"
		switch {
		case n.RDBSave == unknown:
			// INFO says whether AOF is on; CONFIG GET, refused, would have said the rest.
			persistence = "unknown (CONFIG GET refused; INFO says appendonly no)"
			if n.AOF {
				persistence = "AOF (appendfsync unknown: CONFIG GET refused)"
			}
		case n.AOF:
			persistence = "AOF (appendfsync " + n.AOFFsync + ")"
		case n.RDBSave != "":
			persistence = "RDB (save " + n.RDBSave + ")"
		}
		maxmem := "no limit"
		if n.Maxmemory > 0 {
			maxmem = strconv.FormatInt(n.Maxmemory, 10) + " bytes"
		}
		fmt.Fprintf(&b, "%s %s: Redis %s %s, maxmemory %s, policy %s, persistence %s, %d replicas, maxclients %d (%d connected), PING RTT min %.0f us median %.0f us\n",
			n.Addr, n.Role, n.Version, n.Mode, maxmem, n.MaxmemoryPolicy, persistence, n.Replicas, n.MaxClients, n.ConnectedClients, n.PingRTTMinUS, n.PingRTTMedianUS)
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	_, err := out.Write([]byte(b.String()))
	return err
}
