package main

// usage is what lockbench prints without a command, and help before the manual's topics.
const usage = `lockbench — benchmark and load generator for Redis distributed locks

Usage:
  lockbench run [flags]     run a workload against one or more lock drivers, side by side
  lockbench up [flags]      start a Redis topology (single, sentinel, cluster, masters:N) and keep it running
  lockbench down [flags]    stop a topology started by lockbench up
  lockbench status [flags]  list the running topologies and PING their nodes
  lockbench check --addr A  preflight of a deployment: version, eviction, persistence, replicas, limits, RTT; warnings
  lockbench acl [flags]     print the ACL SETUSER line of a least-privilege Redis user for lockbench
  lockbench sweep [flags]   step the load up and find each driver's knee under a latency SLO
  lockbench compare BASE NEW  regression gate: compare two sets of result files, exit 1 on a regression
  lockbench worker [flags]  one generator process of a run made by several (what run --procs starts; for orchestrators)
  lockbench merge FILE... -o OUT  merge the result files of worker processes into one result
  lockbench export FILE...  write HDR percentile (.hgrm) and interval log (.hlog) files from result files
  lockbench report -o DIR FILE...  draw result files as an offline HTML page and PNG charts
  lockbench driver-check ADAPTER  check that an external-driver adapter keeps the lock's rules
  lockbench image build     build a Redis image from this machine's redis-server, for --provider docker
  lockbench version         print the version
  lockbench help [TOPIC]    show help: a command's flags, or where a topic's manual page is

Run 'lockbench COMMAND --help' for a command's flags and examples.
`
