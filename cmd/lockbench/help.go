package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// helpTopic is one page of the manual under docs/: `lockbench help NAME` says where it is.
type helpTopic struct {
	name    string // what `lockbench help` takes: a command, or a subject
	file    string // its page, relative to the repository's root
	title   string // the page's first line, without "# " (a test checks they agree)
	summary string // one line: what the page is for
}

// helpTopics is the manual's table of contents as the CLI knows it. Every page of docs/ has at
// least one topic here and every topic's page exists (TestHelpTopicsMatchDocs), so a new page
// needs a line here. Several commands documented together share a page (up, down, status).
var helpTopics = []helpTopic{
	{"run", "docs/run.md", "`lockbench run`", "every flag of run, its exit codes, and how to read its summary"},
	{"sweep", "docs/sweep.md", "Finding the knee: `lockbench sweep`", "capacity planning: step the load up and find each driver's knee under a latency SLO"},
	{"compare", "docs/compare.md", "`lockbench compare`: the regression gate", "compare two sets of result files with statistics; exit 1 on a regression"},
	{"thresholds", "docs/thresholds.md", "Thresholds inside a run: `lockbench run --threshold`", "pass/fail conditions inside one run, --abort-on-fail, scripts/gate.sh"},
	{"ci", "docs/ci.md", "CI recipes: GitHub Actions", "pull-request workflows that run BASE and NEW and compare them"},
	{"report", "docs/report.md", "Reports: `lockbench report`", "an offline HTML page and PNG charts of result files"},
	{"up", "docs/up-down-status.md", "`lockbench up`, `down` and `status`", "start a topology and keep it running for other tools"},
	{"down", "docs/up-down-status.md", "`lockbench up`, `down` and `status`", "stop a topology started by lockbench up"},
	{"status", "docs/up-down-status.md", "`lockbench up`, `down` and `status`", "list the running topologies and PING their nodes"},
	{"worker", "docs/worker-merge.md", "`lockbench worker` and `lockbench merge`", "one generator process of a run over many machines; the common start; --collect"},
	{"merge", "docs/worker-merge.md", "`lockbench worker` and `lockbench merge`", "merge the result files of worker processes into one, from files or from a Redis"},
	{"export", "docs/export.md", "HDR exports and the timeline: `lockbench export`", ".hgrm and .hlog files, and the per-second timeline"},
	{"image", "docs/image.md", "`lockbench image build`", "the Redis image for --provider docker and the lockbench image for generator containers"},
	{"acl", "docs/acl-check.md", "`lockbench acl` and `lockbench check`", "the ACL SETUSER line of a least-privilege user for lockbench"},
	{"check", "docs/acl-check.md", "`lockbench acl` and `lockbench check`", "preflight of a deployment: version, eviction, persistence, replicas, RTT; warnings"},
	{"external-drivers", "docs/external-drivers.md", "External drivers: lock libraries in any language", "the adapter protocol (exec:NAME=COMMAND), the in-tree adapters, lockbench driver-check"},
	{"driver-check", "docs/external-drivers.md", "External drivers: lock libraries in any language", "check that an external-driver adapter keeps the lock's rules"},
	{"drivers", "docs/drivers.md", "Drivers and their options", "the lock libraries, the Redisson profiles, and each driver's :key=value options"},
	{"workloads", "docs/workloads.md", "Workloads", "contention, rw, multilock, reentrancy, longhold; fairness, hold checks, the post-run audit"},
	{"topologies", "docs/topologies.md", "Topologies and deployments: URLs, credentials, TLS", "single, sentinel, cluster, masters:N; attaching with redis://, rediss://, ACL users and TLS"},
	{"docker", "docs/docker.md", "Docker: `--provider docker` and compose files", "topologies as containers, and the compose files"},
	{"faults", "docs/faults.md", "Faults during a run: `--fault`", "kill, pause, restart, fail-over, partition, isolate; what they did to the locks"},
	{"client-faults", "docs/client-faults.md", "Client faults: a paused process, a stalled holder", "pause-client and stall: a generator process stopped, or its holders stuck, past their lease"},
	{"net", "docs/net.md", "Network conditions: `--net`", "latency and jitter between the clients and Redis"},
	{"open-loop", "docs/open-loop.md", "Open loop and coordinated omission: `--rate`", "arrivals at a rate, latency from the intended start, late and dropped attempts"},
	{"results", "docs/results.md", "Result files", "the JSON result schema, benchstat lines, histograms"},
	{"capacity", "docs/capacity.md", "Capacity per Redis core: `--pin` and the projection", "CPU placement and the projected server-bound capacity"},
	{"metrics", "docs/metrics.md", "Watching a run: Prometheus, `--metrics-addr`", "the Prometheus endpoint, its series, and the dashboard's queries"},
	{"procs", "docs/procs.md", "Several processes and machines", "--procs, the cross-process checker, the referee, generator containers, Swarm, Kubernetes"},
	{"lockcore", "docs/lockcore.md", "Using lockcore as a library", "lockcore's Go API and the Redisson lock each kind speaks"},
	{"findings", "docs/findings.md", "Findings: what lockbench measured", "the measured tables: libraries side by side, the hot lock, latency, Redisson releases, capacity"},
	{"resource", "docs/protected-resource.md", "The protected resource (`--resource`)", "--resource fenced|plain: what holders write behind the lock, corrupt and stale writes"},
	{"safety-matrix", "docs/safety-matrix.md", "The safety matrix: what each lock protects when a holder stalls, a master fails over, or a node is cut off", "every driver through pauses, stalls, fail-overs, partitions and RedLock restarts: double grants, corrupt and stale writes; --scenario"},
	{"safety", "docs/safety.md", "Safety: what the checkers see and what a lock protects", "the checkers, the negative control, lockcore's hand-over rules, safety under faults"},
	{"development", "docs/development.md", "Layout, tests and Go benchmarks", "the packages, the tests and the Go benchmarks"},
	{"go-benchmark", "docs/go-benchmark.md", "A lock benchmark as a Go test", "a Go test that starts Redis, runs two drivers, checks thresholds and writes the result file"},
}

// manualIndex is the manual's table of contents for a reader.
const manualIndex = "docs/index.md"

// findTopic returns the topic called name.
func findTopic(name string) (helpTopic, bool) {
	i := slices.IndexFunc(helpTopics, func(t helpTopic) bool { return t.name == name })
	if i < 0 {
		return helpTopic{}, false
	}
	return helpTopics[i], true
}

// writeTopics lists the topics, one a line, for `lockbench help`.
func writeTopics(w io.Writer) {
	fmt.Fprintf(w, "\nManual topics ('lockbench help TOPIC' says where its page is; contents: %s):\n", manualIndex)
	for _, t := range helpTopics {
		fmt.Fprintf(w, "  %-12s %s\n", t.name, t.summary)
	}
}

// writeTopic says where a topic's page is and what it covers.
func writeTopic(w io.Writer, t helpTopic) {
	fmt.Fprintf(w, "%s\n  %s\n  manual: %s (in the lockbench repository; contents: %s)\n",
		strings.ReplaceAll(t.title, "`", ""), t.summary, t.file, manualIndex)
}

// helpCommand is `lockbench help [NAME]`: the usage and the topics; a command's flags and its
// page; or a topic's page.
func helpCommand(args []string, commands map[string]func([]string, io.Writer, io.Writer) int, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		writeTopics(stdout)
		return exitOK
	}
	name := args[0]
	t, isTopic := findTopic(name)
	if cmd, ok := commands[name]; ok {
		code := cmd([]string{"--help"}, stdout, stderr)
		if isTopic {
			fmt.Fprintln(stdout)
			writeTopic(stdout, t)
		}
		return code
	}
	if !isTopic {
		names := make([]string, len(helpTopics))
		for i, t := range helpTopics {
			names[i] = t.name
		}
		fmt.Fprintf(stderr, "lockbench help: unknown command or topic %q; commands are listed by 'lockbench help', topics are: %s\n",
			name, strings.Join(names, ", "))
		return exitUsage
	}
	writeTopic(stdout, t)
	return exitOK
}
