// Package faults schedules faults during a measured phase: kill, pause (SIGSTOP for a while),
// restart a server, trigger a fail-over, partition a node from the clients through a network
// proxy, or isolate it from the other servers, each at a time from the start of the phase.
//
// A fault is written ACTION[:NODE]@AT[+FOR] (see Parse):
//
//	kill:master@3s          SIGKILL the master 3 s into the phase
//	pause:master@3s+2s      SIGSTOP the master at 3 s, SIGCONT it 2 s later
//	restart:master@8s       start again the server an earlier kill:master killed, same port and config
//	kill:replica1@3s        the first replica; sentinel2, node3, master2 likewise
//	failover@3s             SENTINEL FAILOVER (sentinel), CLUSTER FAILOVER on replica1 (cluster)
//	failover:replica2@3s    CLUSTER FAILOVER on the second replica (cluster)
//	partition:master@3s+2s  cut the clients off from the node through the network proxy for 2 s (needs --net)
//	isolate:master@3s+8s    cut the node off from the other servers for 8 s; the clients still reach it
//	                        (docker sentinel: the master keeps taking writes while a replica is promoted)
//	pause-client:gen2@3s+2s stop generator process 2 of lockbench run --procs (SIGSTOP; docker pause for
//	                        --generators docker) at 3 s and resume it 2 s later: its watchdog stops too
//	stall:gen1@3s+2s        the workers of generator process 1 that hold a lock at 3 s keep it, inside
//	                        their critical section, until 5 s; the process and its watchdog run on
//
// Nodes are named by role and 1-based position as compose.Topology.Describe lists them when the
// fault fires: master (the same as master1), masterN, replicaN, sentinelN, and nodeN (the Nth
// node of the whole list). Roles change under faults: after a fail-over "master" is the promoted
// replica. A restart names the node as the earlier kill did and restarts the server that kill
// killed, whatever the name means by then.
//
// Generator processes are genN, 1-based: gen1 is the worker of index 0, and with --procs 1 it is
// lockbench's own process, which can be stalled but not paused (it runs the schedule). Client
// faults must end inside the measured phase. A Schedule carries out pause-client through its
// Clients; a stall is carried out by the generator process itself (workloads.Stall), and is
// never scheduled.
//
// Validate checks a schedule against a topology's layout before anything is measured;
// Schedule.Run carries it out against a Target, and never leaves a server stopped: every pause
// is resumed when its time is up or when the run ends, whichever comes first.
package faults
