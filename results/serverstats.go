package results

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Node roles as NodeStats.Role records them; they match compose's role names (Redis's own words).
const (
	// RoleMaster is a node that accepts writes: its commands are the workload's.
	RoleMaster = "master"
	// RoleReplica is a node that replays a master's writes.
	RoleReplica = "replica"
)

// NodeStats is one Redis server's counters at one moment: INFO commandstats and INFO cpu. It is
// a plain value, safe for concurrent reads.
type NodeStats struct {
	// Addr is the node's host:port.
	Addr string
	// Role is RoleMaster, RoleReplica or another compose role.
	Role string
	// Commands is the node's INFO commandstats.
	Commands CommandStats
	// CPU is used_cpu_user + used_cpu_sys of the server process (all its threads).
	CPU time.Duration
	// ErrorReplies is INFO errorstats: error replies sent, by prefix (see ParseErrorStats).
	// RejectedConnections is INFO stats' rejected_connections (maxclients), ConnectionsReceived
	// its total_connections_received.
	ErrorReplies        map[string]int64
	RejectedConnections int64
	ConnectionsReceived int64
}

// ServerStats is a snapshot of every measured server of a topology, one entry per node. It is a
// plain value, safe for concurrent reads.
type ServerStats []NodeStats

// Sub returns after minus before, node by node, matched by address and in after's order. A
// node absent from before cannot give a delta and is left out: a node that joined during the
// phase (a failover promoting a replica the snapshot did not cover) would otherwise be counted
// from zero, inflating the totals by its whole history. It is safe for concurrent use.
func (after ServerStats) Sub(before ServerStats) ServerStats {
	prev := make(map[string]NodeStats, len(before))
	for _, n := range before {
		prev[n.Addr] = n
	}
	out := make(ServerStats, 0, len(after))
	for _, a := range after {
		b, ok := prev[a.Addr]
		if !ok {
			continue
		}
		out = append(out, NodeStats{Addr: a.Addr, Role: a.Role, Commands: a.Commands.Sub(b.Commands), CPU: a.CPU - b.CPU,
			ErrorReplies:        subCounts(a.ErrorReplies, b.ErrorReplies),
			RejectedConnections: subCount(a.RejectedConnections, b.RejectedConnections),
			ConnectionsReceived: subCount(a.ConnectionsReceived, b.ConnectionsReceived)})
	}
	return out
}

// ParseCPU reads used_cpu_sys and used_cpu_user from the text of INFO cpu (or a full INFO) and
// returns their sum. Both fields must be present and be non-negative decimal seconds. It is safe
// for concurrent use.
func ParseCPU(info string) (time.Duration, error) {
	var sys, user float64
	var haveSys, haveUser bool
	for _, line := range strings.Split(info, "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		var dst *float64
		switch key {
		case "used_cpu_sys":
			dst, haveSys = &sys, true
		case "used_cpu_user":
			dst, haveUser = &user, true
		default:
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("INFO cpu: %s: %q is not a number of seconds", key, value)
		}
		*dst = v
	}
	if !haveSys || !haveUser {
		return 0, fmt.Errorf("INFO cpu: used_cpu_sys or used_cpu_user missing")
	}
	return time.Duration((sys + user) * float64(time.Second)), nil
}
