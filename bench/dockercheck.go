package bench

import (
	"strings"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/target"
)

// DockerCheck is what a session whose generators run as containers (lockbench run
// --generators docker) is checked against: the containers cannot reach this host's loopback
// nor read its files. The error messages name lockbench run's flags.
type DockerCheck struct {
	// Provider and Topology are how lockbench starts the deployment, if it does.
	Provider string
	Topology compose.Spec
	// Secure: lockbench starts it with a password or TLS (--auth, --tls), whose files are here.
	Secure bool
	// Net: --net, whose proxies listen on this host's loopback.
	Net bool
	// Profiles: --cpuprofile or --trace, which would stay in the removed containers.
	Profiles bool
	// Metrics: --metrics-addr, whose endpoints would be inside the containers.
	Metrics bool
	// ConnArgs are the connection flags the generators are given (--tls-ca-file=…).
	ConnArgs []string
	// Referee, Collect and Addrs are the addresses the containers must reach: the referee
	// (NativeReferee for one lockbench starts), the collection Redis and the deployment's.
	Referee, Collect string
	Addrs            []string
}

// Check returns what the generator containers cannot do, as an error wrapping ErrBadSpec, or
// nil. Referee is to be set: without one nothing checks mutual exclusion across the
// containers, which share no memory (the caller gives them NativeReferee).
func (c DockerCheck) Check() error {
	switch {
	case c.Provider == target.ProviderDocker && c.Topology.Kind == compose.KindCluster:
		return bad("--generators docker cannot reach --provider docker's cluster: its nodes run on the host's network, on loopback; use the native provider (its servers then bind on the generators' network)")
	case c.Secure:
		return bad("--generators docker with --auth or --tls is not supported: the certificates and password files lockbench makes are on this host, which the containers cannot read")
	case c.Net:
		return bad("--net is not available with --generators docker: its proxies listen on this host's loopback, which the containers cannot reach")
	case c.Profiles:
		return bad("--cpuprofile and --trace are not available with --generators docker: the profiles would stay in the removed containers")
	case c.Metrics:
		return bad("--metrics-addr is not available with --generators docker: the generators' endpoints would be inside their containers")
	}
	for _, a := range c.ConnArgs {
		if strings.HasPrefix(a, "--tls") {
			return bad("--generators docker with TLS files (%s) is not supported: they are on this host, which the containers cannot read", strings.SplitN(a, "=", 2)[0])
		}
	}
	switch {
	case c.Referee != NativeReferee && OnLoopback(c.Referee):
		return bad("--referee %s is on this host's loopback, which the generator containers cannot reach: give an address they can reach, or --referee native", c.Referee)
	case c.Collect != "" && OnLoopback(c.Collect):
		return bad("--collect %s is on this host's loopback, which the generator containers cannot reach: give an address they can reach, or leave it out (lockbench then starts one they reach)", c.Collect)
	}
	for _, a := range c.Addrs {
		if OnLoopback(a) {
			return bad("--addr %s is on this host's loopback, which a generator container (its own network namespace) cannot reach: give an address the containers can reach, or let lockbench start the servers", a)
		}
	}
	return nil
}
