package results

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteSummary is WriteSummaryBaseline with the first run's driver as the
// baseline. It is safe for concurrent use with distinct writers.
func WriteSummary(w io.Writer, runs []Run) error {
	return WriteSummaryBaseline(w, runs, "")
}

// WriteSummaryBaseline writes a plain-text report for people. When no
// driver ran more than once it is a table with one row per run; when runs
// were repeated it is one row per driver and case (see GroupRuns) with the
// medians of the repetitions and the min–max of acq/s. Latencies are in
// human units, runs that did not finish are marked INCOMPLETE. Then each
// driver's throughput and acquire p99 as a ratio to the baseline driver on
// the same case (see Ratios; "" means the first run's driver), and, for
// runs on more than one master, how commands and server CPU spread over the
// nodes. It is safe for concurrent use with distinct writers.
func WriteSummaryBaseline(w io.Writer, runs []Run, baseline string) error {
	groups := GroupRuns(runs)
	repeated := false
	cases := make(map[string]bool)
	for i := range groups {
		repeated = repeated || len(groups[i].Runs) > 1
		cases[groups[i].Case().String()] = true
	}
	// The driver names a group unless the runs cover several cases.
	label := func(g *Group) string {
		if len(cases) == 1 {
			return g.Driver()
		}
		r := g.Runs[0]
		if r.Net != "" {
			return fmt.Sprintf("%s (%s, conc %d, net %s)", r.Driver, topologyLabel(&r), r.Concurrency, r.Net)
		}
		return fmt.Sprintf("%s (%s, conc %d)", r.Driver, topologyLabel(&r), r.Concurrency)
	}

	var buf bytes.Buffer
	if repeated {
		writeMedianTable(&buf, groups)
	} else {
		writeRunTable(&buf, runs)
	}
	writeNet(&buf, runs)
	writeOpenLoop(&buf, runs)
	writeWaiting(&buf, runs, groups, repeated)
	writeRatios(&buf, Ratios(groups, baseline), label, repeated)
	writeFloor(&buf, groups, label)
	writePipe(&buf, groups, label)
	writeNodes(&buf, groups, label)
	writeCapacity(&buf, groups, repeated)
	_, err := w.Write(buf.Bytes())
	return err
}

func writeRunTable(buf *bytes.Buffer, runs []Run) {
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tdriver\ttopology\tconc\tkeys\tacquisitions\tacq/s\tacq p50\tacq p99\tacq p999\tacq max\tcycle p99\tcmds/acq\tfailed/acq\thandoffs/acq\tclient cpu/acq\tredis cpu/acq\terrors\tviolations")
	for _, r := range runs {
		failed, handoffs := "-", "-"
		if d := r.DriverCounts; d != nil {
			failed, handoffs = perAcq(d.FailedAttemptsPerAcquisition), perAcq(d.LocalHandoffsPerAcquisition)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%d\t%d",
			r.Workload, r.Driver, topologyLabel(&r), r.Concurrency, r.Keys, r.Acquisitions, rate(r.ThroughputPerS),
			latency(r.AcquireLatencyUS.P50), latency(r.AcquireLatencyUS.P99),
			latency(r.AcquireLatencyUS.P999), latency(r.AcquireLatencyUS.Max),
			latency(r.CycleLatencyUS.P99), r.RedisCommandsPerAcquisition, failed, handoffs,
			cpuTime(r.ClientCPUPerAcquisitionUS), cpuTime(r.ServerCPUPerAcquisitionUS), r.Errors, r.Violations)
		// The marker is a trailing cell, so complete rows carry no padding.
		if !r.Complete {
			fmt.Fprint(tw, "\tINCOMPLETE")
			if r.Incomplete != "" {
				fmt.Fprintf(tw, " (%s)", r.Incomplete)
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush() // cannot fail: it writes to a bytes.Buffer
}

func writeMedianTable(buf *bytes.Buffer, groups []Group) {
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tdriver\ttopology\tconc\tkeys\trounds\tacq/s\tacq/s min–max\tacq p50\tacq p99\tacq p999\tcmds/acq\tfailed/acq\thandoffs/acq\tclient cpu/acq\tredis cpu/acq\terrors\tviolations")
	for i := range groups {
		g := &groups[i]
		r := g.Runs[0]
		spread := "-"
		if g.Measured > 0 {
			spread = rate(g.MinThroughputPerS) + "–" + rate(g.MaxThroughputPerS)
		}
		failed, handoffs := "-", "-"
		if g.Counted > 0 {
			failed, handoffs = perAcq(g.FailedAttemptsPerAcquisition), perAcq(g.LocalHandoffsPerAcquisition)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%d\t%d",
			r.Workload, r.Driver, topologyLabel(&r), r.Concurrency, r.Keys, len(g.Runs),
			rate(g.ThroughputPerS), spread,
			latency(g.AcquireP50US), latency(g.AcquireP99US), latency(g.AcquireP999US),
			g.CommandsPerAcquisition, failed, handoffs, cpuTime(g.ClientCPUPerAcquisitionUS), cpuTime(g.ServerCPUPerAcquisitionUS),
			g.Errors, g.Violations)
		if g.Incomplete > 0 {
			fmt.Fprintf(tw, "\tINCOMPLETE (%d of %d rounds", g.Incomplete, len(g.Runs))
			for _, r := range g.Runs {
				if !r.Complete && r.Incomplete != "" {
					fmt.Fprintf(tw, "; %s", r.Incomplete)
					break
				}
			}
			fmt.Fprint(tw, ")")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush() // cannot fail: it writes to a bytes.Buffer
	buf.WriteString("acq/s, latencies, cmds/acq, failed/acq, handoffs/acq and cpu/acq are medians over the rounds.\n")
}

func writeRatios(buf *bytes.Buffer, ratios []Ratio, label func(*Group) string, repeated bool) {
	sep := "\n"
	for _, x := range ratios {
		// The baseline is of the same case, so its driver names it.
		fmt.Fprintf(buf, "%s%s: %.2fx %s throughput", sep, label(x.Group), x.Throughput, x.Base.Driver())
		if x.P99 > 0 {
			fmt.Fprintf(buf, ", p99 %.2fx", x.P99)
		}
		if repeated && x.Paired > 1 {
			fmt.Fprintf(buf, " (per round %.2fx–%.2fx)", x.RoundMin, x.RoundMax)
		}
		buf.WriteString("\n")
		sep = ""
	}
}

// FloorDriver is the name of the reference driver (drivers.FloorDriver: SET NX PX + DEL) whose
// Redis CPU per acquisition the summary sets the others' against, on the same case.
const FloorDriver = "floor"

// writeFloor states each driver's Redis CPU per acquisition as a multiple of the floor's
// measured in the same invocation on the same case, when the floor ran and both were measured:
// what a lock costs Redis beyond the cheapest acquisition it can serve.
func writeFloor(buf *bytes.Buffer, groups []Group, label func(*Group) string) {
	sep := "\n"
	for i := range groups {
		f := &groups[i]
		if f.Driver() != FloorDriver || f.ServerCPUPerAcquisitionUS <= 0 {
			continue
		}
		for j := range groups {
			g := &groups[j]
			if g.Driver() == FloorDriver || g.ServerCPUPerAcquisitionUS <= 0 || g.Case().String() != f.Case().String() {
				continue
			}
			if sep != "" {
				fmt.Fprintf(buf, "%sRedis CPU per acquisition against the floor (SET NX PX + DEL, %s, same run):\n", sep, cpuTime(f.ServerCPUPerAcquisitionUS))
				sep = ""
			}
			fmt.Fprintf(buf, "  %s: %.2fx the floor (%s)\n", label(g), g.ServerCPUPerAcquisitionUS/f.ServerCPUPerAcquisitionUS, cpuTime(g.ServerCPUPerAcquisitionUS))
		}
	}
}

// writeNodes shows how each group's commands and server CPU spread over
// the nodes, for groups that ran on more than one master: the check that a
// cluster or multi-master run really loaded every master.
func writeNodes(buf *bytes.Buffer, groups []Group, label func(*Group) string) {
	type total struct {
		role     string
		commands int64
		cpuUS    float64
	}
	sep := "\n"
	var tw *tabwriter.Writer
	for i := range groups {
		g := &groups[i]
		var order []string
		totals := make(map[string]*total)
		masters := 0
		var masterCommands int64
		for _, r := range g.Runs {
			for _, n := range r.Nodes {
				t, ok := totals[n.Addr]
				if !ok {
					t = &total{role: n.Role}
					totals[n.Addr] = t
					order = append(order, n.Addr)
					if isMaster(n.Role) {
						masters++
					}
				}
				t.commands += n.Commands
				t.cpuUS += n.CPUUS
				if isMaster(n.Role) {
					masterCommands += n.Commands
				}
			}
		}
		if masters < 2 {
			continue
		}
		if tw == nil {
			fmt.Fprintf(buf, "%sper node (measured phases", sep)
			if len(g.Runs) > 1 {
				buf.WriteString(" of all rounds")
			}
			buf.WriteString("):\n")
			tw = tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "driver\tnode\trole\tcommands\tshare\tredis cpu")
			sep = ""
		}
		for _, addr := range order {
			t := totals[addr]
			share := "-"
			if isMaster(t.role) && masterCommands > 0 {
				share = strconv.FormatFloat(100*float64(t.commands)/float64(masterCommands), 'f', 1, 64) + "%"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", label(g), addr, t.role, t.commands, share, latency(t.cpuUS))
		}
	}
	if tw != nil {
		tw.Flush() // cannot fail: it writes to a bytes.Buffer
	}
}

func isMaster(role string) bool { return role == "" || role == RoleMaster }

// latency formats microseconds with about three significant digits, e.g.
// "412µs", "1.27ms", "2.0s"; "-" means nothing was measured.
func latency(us float64) string {
	switch {
	case us <= 0:
		return "-"
	case us < 999.5:
		return strconv.FormatFloat(us, 'f', 0, 64) + "µs"
	case us < 9_995:
		return strconv.FormatFloat(us/1e3, 'f', 2, 64) + "ms"
	case us < 99_950:
		return strconv.FormatFloat(us/1e3, 'f', 1, 64) + "ms"
	case us < 999_500:
		return strconv.FormatFloat(us/1e3, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(us/1e6, 'f', 1, 64) + "s"
}

// cpuTime formats a CPU time per acquisition, which is often a few
// microseconds, so below 10µs it keeps one decimal; "-" means unmeasured.
func cpuTime(us float64) string {
	if us > 0 && us < 9.95 {
		return strconv.FormatFloat(us, 'f', 1, 64) + "µs"
	}
	return latency(us)
}

func rate(perS float64) string {
	if perS < 100 {
		return strconv.FormatFloat(perS, 'f', 1, 64)
	}
	return strconv.FormatFloat(perS, 'f', 0, 64)
}

// perAcq formats a driver count per acquisition.
func perAcq(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// writeNet says under the table which network conditions lockbench put between its clients
// and Redis (--net), when any run had some: the table's latencies include them.
func writeNet(buf *bytes.Buffer, runs []Run) {
	var seen []string
	for i := range runs {
		n := runs[i].Net
		if n == "" {
			n = "none (direct)"
		}
		if !slices.Contains(seen, n) {
			seen = append(seen, n)
		}
	}
	if len(seen) == 1 && seen[0] == "none (direct)" {
		return
	}
	fmt.Fprintf(buf, "network between clients and Redis: %s (in-process proxies; latency is one way, each round trip gains twice it).\n", strings.Join(seen, "; "))
}

// writeWaiting adds the pub/sub waiting table when a run waited on pub/sub (see WaitCounts):
// with no subscription anywhere (lockcore in one process, or no lock ever taken), every row
// would be zeros. Repeated runs get one row per driver and case, like the table above them
// (see waitingRow), not one per round.
func writeWaiting(buf *bytes.Buffer, runs []Run, groups []Group, repeated bool) {
	if !slices.ContainsFunc(runs, func(r Run) bool {
		w := r.Waiting
		return w != nil && (w.Subscribes > 0 || w.SubscribeTimeouts > 0 || w.ChannelsAfter > 0)
	}) {
		return
	}
	buf.WriteString("\nwaiting on pub/sub (missed: waits ended by the TTL or a bound, not a message; -: the driver waits by polling or does not count):\n")
	if repeated {
		buf.WriteString("(per driver over its rounds: subs/acq and unsubs/acq are medians, peak channels and channels after the largest, woken, missed and subscribe timeouts summed)\n")
	}
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	if repeated {
		fmt.Fprintln(tw, "driver\ttopology\tconc\tkeys\trounds\tsubs/acq\tunsubs/acq\tpeak channels\twoken\tmissed\tsubscribe timeouts\tchannels after")
		for i := range groups {
			g := &groups[i]
			r := g.Runs[0]
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", r.Driver, topologyLabel(&r), r.Concurrency, r.Keys, len(g.Runs), waitingRow(g.Runs))
		}
	} else {
		fmt.Fprintln(tw, "driver\ttopology\tconc\tkeys\tsubs/acq\tunsubs/acq\tpeak channels\twoken\tmissed\tsubscribe timeouts\tchannels after")
		for _, r := range runs {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", r.Driver, topologyLabel(&r), r.Concurrency, r.Keys, waitingRow([]Run{r}))
		}
	}
	tw.Flush() // cannot fail: it writes to a bytes.Buffer
}

// waitingRow is the tab-separated waiting cells of runs (the rounds of one driver and case):
// "-" cells when none of them counted; otherwise the medians of the per-acquisition figures, the
// largest peak and leftover channel counts (the worst round is the one that matters for a
// pool's limit and for leaks) and the sums of the event counts over the rounds that counted.
func waitingRow(runs []Run) string {
	var subs, unsubs []float64
	var w WaitCounts
	for _, r := range runs {
		c := r.Waiting
		if c == nil {
			continue
		}
		subs = append(subs, c.SubscribesPerAcquisition)
		unsubs = append(unsubs, c.UnsubscribesPerAcquisition)
		w.PeakChannels = max(w.PeakChannels, c.PeakChannels)
		w.ChannelsAfter = max(w.ChannelsAfter, c.ChannelsAfter)
		w.WokenByMessage += c.WokenByMessage
		w.EndedWithoutWake += c.EndedWithoutWake
		w.SubscribeTimeouts += c.SubscribeTimeouts
	}
	if len(subs) == 0 {
		return "-\t-\t-\t-\t-\t-\t-"
	}
	return fmt.Sprintf("%.3f\t%.3f\t%d\t%d\t%d\t%d\t%d", Median(subs), Median(unsubs), w.PeakChannels,
		w.WokenByMessage, w.EndedWithoutWake, w.SubscribeTimeouts, w.ChannelsAfter)
}
