package faults

import (
	"fmt"

	"github.com/lockbench/lockbench/compose"
)

// Resolve returns the address of node n in d: the n.N-th node of its role in d's order (any
// role for "node"). It fails when d has fewer.
func Resolve(d compose.Description, n Node) (string, error) {
	seen := 0
	for _, dn := range d.Nodes {
		if n.Role != RoleNode && dn.Role != n.Role {
			continue
		}
		if seen++; seen == n.N {
			return dn.Addr, nil
		}
	}
	return "", fmt.Errorf("faults: no %s: the %s topology lists %d %ss now", n, d.Kind, seen, n.Role)
}

// failoverReplica returns the replica a cluster failover promotes: the one named, or the first.
func failoverReplica(d compose.Description, n Node) (string, error) {
	if n.Role == "" {
		n = Node{Role: RoleReplica, N: 1}
	}
	return Resolve(d, n)
}
