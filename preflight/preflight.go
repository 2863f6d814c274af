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
// schedule is then "unknown", and Warnings says so. It is safe for concurrent use with distinct nodes.
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
		if n.RDBSave == unknown {
			w = append(w, n.Addr+": CONFIG GET is not allowed (a least-privilege user: NOPERM), so the save schedule and appendfsync are unknown and lockbench cannot warn about persistence; check them as an admin")
		}
		if n.Role == "master" {
			switch {
			case !n.AOF && n.RDBSave == "":
				w = append(w, n.Addr+": no persistence (appendonly no, no save): a restarted master has forgotten every held lock; keep it down for the longest lease before it rejoins, or turn on AOF")
			case n.AOF && n.AOFFsync != "always" && n.AOFFsync != "":
				w = append(w, fmt.Sprintf("%s: appendfsync %s: a crash can lose the last grants (up to a second), so a restarted master may grant a lock that is held", n.Addr, n.AOFFsync))
			}
			if n.Replicas > 0 || kind == "sentinel" || kind == "cluster" {
				w = append(w, n.Addr+": replication is asynchronous: a fail-over can promote a replica that never saw a grant, and two clients hold the lock")
			}
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

// Write prints d for people: one line per node, then the warnings.
func Write(out io.Writer, d *results.Deployment) error {
	var b strings.Builder
	for _, n := range d.Nodes {
		persistence := "none"
		switch {
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
