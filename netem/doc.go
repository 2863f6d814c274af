// Package netem puts network conditions between Redis clients and Redis: one-way latency and
// jitter on every connection, and faults that tests put on the connections to one server:
// partitions that silence it, replies lost or late while commands still run (the "did my
// command run?" case), and severed connections (see Partition, DropReplies, StallReplies,
// Sever, Pause and Heal). Loopback round trips take about 50 µs and flatter every lock; real
// deployments have 0.2 to 2 ms between a service and Redis, and a lock that needs two round
// trips per acquisition pays for both.
//
// A Net is an in-process TCP proxy built on github.com/Shopify/toxiproxy/v2, used as a library:
// its Dial method, given to a client as its dialer, sends the connection through a proxy in
// front of the address asked for. Proxies are made on first use, one per upstream address, so
// the addresses a client discovers at run time (cluster nodes from CLUSTER SLOTS, the master a
// sentinel names) are proxied like the ones it was given.
//
// The conditions are written as a spec (see Parse):
//
//	latency=1ms,jitter=200us
package netem
