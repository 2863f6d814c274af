package referee

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/redis/rueidis"
)

// Node is a data node of the deployment under test: its address as dialled and a client of it.
type Node struct {
	Addr   string
	Client rueidis.Client
}

// CheckApart returns an error wrapping ErrUnderTest when the referee is one of nodes: the same
// host and port once names are resolved (localhost is 127.0.0.1), or the same server
// reached another way (a proxy, a NAT, another name), which INFO's run_id tells. Faults and load
// meant for the deployment would reach the referee, and a referee on the lock's own server
// shares its fate.
func (r *Referee) CheckApart(ctx context.Context, nodes []Node) error {
	refAddr := r.s.Addrs()[0]
	refEnds := endpoints(ctx, refAddr)
	for _, n := range nodes {
		for _, e := range endpoints(ctx, n.Addr) {
			for _, re := range refEnds {
				if e == re {
					return fmt.Errorf("%w: %s is %s, a node of the deployment under test", ErrUnderTest, r, n.Addr)
				}
			}
		}
	}
	refID, err := runID(ctx, r.c)
	if err != nil {
		return fmt.Errorf("referee %s: INFO server: %w", r, err)
	}
	for _, n := range nodes {
		id, err := runID(ctx, n.Client)
		if err != nil {
			continue // a node that does not say cannot be compared; the address check stands
		}
		if id == refID {
			return fmt.Errorf("%w: %s is the server at %s (run_id %s), a node of the deployment under test", ErrUnderTest, r, n.Addr, id)
		}
	}
	return nil
}

// endpoints returns addr's resolved ip:port forms (or the socket path); a name that does not
// resolve stands for itself.
func endpoints(ctx context.Context, addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return []string{addr} // a unix socket path
	}
	ips, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil || len(ips) == 0 {
		return []string{strings.ToLower(addr)}
	}
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, net.JoinHostPort(ip, port))
	}
	return out
}

// runID reads INFO server's run_id: one per server process.
func runID(ctx context.Context, c rueidis.Client) (string, error) {
	info, err := c.Do(ctx, c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("no run_id in INFO server")
}
