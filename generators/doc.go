// Package generators runs the generator processes of one lockbench run as separate hosts: each
// 'lockbench worker' in a container of the lockbench image (BuildImage), with its own network
// namespace and file system, on a Docker engine of this machine. Nothing is shared between the
// generators but the network: a run made of them is the honest test, on one machine, of a run
// spread over several. Containers and networks carry compose/docker's labels, so what a killed
// run leaves is removed by the next docker start (docker.Reap).
package generators
