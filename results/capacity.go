package results

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"text/tabwriter"
)

// Capacity is a run's projected server-bound capacity: the acquisitions per second at which the
// busiest master's CPU would be fully used, at the run's mix of commands, keys and batching. A
// Redis server runs commands on one thread, so a master saturates when it spends one CPU-second
// per second; the projection scales the run's throughput by how far from that its busiest master
// was. It answers "how much lock traffic can this deployment take" where one client cannot drive
// Redis to saturation, and it holds while the client is not the bottleneck of the CPU Redis
// spends per acquisition (batching changes it: a busier client batches more, so a projection from
// a lightly loaded run is conservative for lockcore). It is a plain value.
type Capacity struct {
	// ProjectedPerS is the run's throughput divided by the busiest master's Utilization.
	ProjectedPerS float64 `json:"projected_per_s"`
	// Utilization is the busiest master's CPU time per second of the measured phase (1 is one
	// core fully busy; a little above 1 is possible, as Redis's background threads count too).
	Utilization float64 `json:"utilization"`
	// Busiest is that master's address.
	Busiest string `json:"busiest"`
	// Masters is every master's share, in the run's node order: on a cluster, one per shard.
	Masters []MasterLoad `json:"masters"`
}

// MasterLoad is one master's part of a Capacity. It is a plain value.
type MasterLoad struct {
	Addr string `json:"addr"`
	// CPUPerAcquisitionUS is the master's CPU time over the phase divided by all of the run's
	// acquisitions (on a cluster, each shard serves a part of them).
	CPUPerAcquisitionUS float64 `json:"cpu_per_acquisition_us"`
	// Utilization is the master's CPU time per second of the phase.
	Utilization float64 `json:"utilization"`
	// ProjectedPerS is the run's throughput at which this master would be fully busy.
	ProjectedPerS float64 `json:"projected_per_s"`
}

// minUtilization is the busiest master's load below which no projection is made: an idle
// Redis still spends CPU on its timers (serverCron), which a projection would scale up as if it
// were lock work.
const minUtilization = 0.01

// RoughUtilization is the busiest master's load below which a projection is marked rough in the
// summary: the fixed idle cost is then a noticeable part of what is scaled.
const RoughUtilization = 0.10

// capacity computes the projection from the per-node CPU of the measured phase; nil when the
// servers' CPU was not measured, the run acquired nothing, or Redis was all but idle.
func (r *Run) capacity() *Capacity {
	if r.DurationS <= 0 || r.Acquisitions <= 0 || r.ThroughputPerS <= 0 {
		return nil
	}
	c := &Capacity{}
	for _, n := range r.Nodes {
		if (n.Role != "" && n.Role != RoleMaster) || n.CPUUS <= 0 {
			continue
		}
		u := n.CPUUS / 1e6 / r.DurationS
		m := MasterLoad{Addr: n.Addr, CPUPerAcquisitionUS: n.CPUUS / float64(r.Acquisitions), Utilization: u, ProjectedPerS: r.ThroughputPerS / u}
		c.Masters = append(c.Masters, m)
		if u > c.Utilization {
			c.Utilization, c.Busiest, c.ProjectedPerS = u, n.Addr, m.ProjectedPerS
		}
	}
	if c.Utilization < minUtilization {
		return nil
	}
	return c
}

// writeCapacity writes the projected server-bound capacity of every group that has one: the
// throughput, the busiest master's utilization and the projection, with each master's share on
// a multi-master topology.
func writeCapacity(buf *bytes.Buffer, groups []Group, repeated bool) {
	var tw *tabwriter.Writer
	for i := range groups {
		g := &groups[i]
		if g.ProjectedPerS <= 0 {
			continue
		}
		if tw == nil {
			buf.WriteString("\nserver-bound capacity (acq/s at which the busiest master's CPU would be fully busy, at this run's mix")
			if repeated {
				buf.WriteString("; medians over the rounds")
			}
			buf.WriteString("):\n")
			tw = tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "workload\tdriver\ttopology\tacq/s\tredis busy\tprojected acq/s\tper master")
		}
		r := g.Runs[0]
		note := ""
		if g.RedisBusy < RoughUtilization {
			note = "\t(rough: Redis was under 10% busy)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f%%\t%s\t%s%s\n", r.Workload, r.Driver, topologyLabel(&r),
			rate(g.ThroughputPerS), 100*g.RedisBusy, rate(g.ProjectedPerS), perMaster(g), note)
	}
	if tw != nil {
		tw.Flush() // cannot fail: it writes to a bytes.Buffer
	}
	if host, servers := sharedHost(groups); servers > 0 {
		fmt.Fprintf(buf, "note: a projection over several masters assumes a CPU core per master; "+
			"here %d servers (masters and replicas) ran on one host (%s), so where they shared its cores the deployment saturates sooner than projected\n", servers, host)
	}
}

// sharedHost finds the groups whose projection spans several masters that all have one host
// address (a local cluster: lockbench's own, or several ports of one machine), which share that
// machine's cores where a per-master projection assumes a core each. It returns the host and the
// most Redis servers of one such run; 0 when there is none.
func sharedHost(groups []Group) (host string, servers int) {
	for i := range groups {
		for _, r := range groups[i].Runs {
			if r.Capacity == nil || len(r.Capacity.Masters) < 2 {
				continue
			}
			h, ok := oneHost(r.Capacity.Masters)
			if ok && len(r.Nodes) > servers {
				host, servers = h, len(r.Nodes)
			}
		}
	}
	return host, servers
}

// oneHost returns the host part the masters' addresses share, if they share one.
func oneHost(masters []MasterLoad) (string, bool) {
	host := ""
	for i, m := range masters {
		h, _, err := net.SplitHostPort(m.Addr)
		if err != nil || (i > 0 && h != host) {
			return "", false
		}
		host = h
	}
	return host, true
}

// perMaster lists each master's utilization in the group's last run with a capacity, on a
// topology with several; "-" on one.
func perMaster(g *Group) string {
	for i := len(g.Runs) - 1; i >= 0; i-- {
		c := g.Runs[i].Capacity
		if c == nil {
			continue
		}
		if len(c.Masters) < 2 {
			return "-"
		}
		parts := make([]string, len(c.Masters))
		for j, m := range c.Masters {
			parts[j] = fmt.Sprintf("%s %.0f%%", m.Addr, 100*m.Utilization)
		}
		return strings.Join(parts, ", ")
	}
	return "-"
}

// MedianProjection is the median of the runs' projected server-bound capacity (Capacity's
// ProjectedPerS) over those that have one; 0 when none does. lockbench sweep shows it beside a
// driver's knee, from the runs of its highest step within the SLO.
func MedianProjection(runs []*Run) float64 {
	var p []float64
	for _, r := range runs {
		if r != nil && r.Capacity != nil {
			p = append(p, r.Capacity.ProjectedPerS)
		}
	}
	return Median(p)
}
