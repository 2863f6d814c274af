#!/usr/bin/env bash
# redisson-profiles.sh produces the Redisson comparison tables of docs/findings.md (issue 30): lockcore, each
# redisson profile (3.23, 3.43, 3.52) and the polling peers, side by side in interleaved rounds,
# on a private single server, sentinel (1 master, 2 replicas) and cluster (3 masters, 3
# replicas) that lockbench starts and stops itself. Three loads per topology:
#
#   w1       64 workers over 10 000 keys, no hold (W1 of docs/findings.md)
#   hot      64 workers on 1 key (the hot lock)
#   waiting  2 000 workers over 1 000 keys, each holding its lock 20 ms, 10 s rounds (longer than
#            Redisson's 7.5 s subscribe timeout): thousands of locks with
#            waiters at once, more channels than Redisson's pool of 250; the summary's "waiting
#            on pub/sub" table has subscribes per acquisition, peak channels, missed wake-ups,
#            subscribe timeouts and channels left subscribed
#
# Measure on a quiet machine: each run is bounded (--duration per round, --repeat rounds).
#
#   bash scripts/redisson-profiles.sh                      # everything, results in lockbench-results/redisson
#   bash scripts/redisson-profiles.sh single hot           # one topology, one load
#   LOCKBENCH_REDISSON_OUT=/tmp/r REPEAT=5 bash scripts/redisson-profiles.sh
#   PROVIDER=docker bash scripts/redisson-profiles.sh       # the servers in containers of
#                                                          # lockbench/redis:local (built first)
set -euo pipefail

# The repository's root, Go on PATH, bin/lockbench built.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out=${LOCKBENCH_REDISSON_OUT:-lockbench-results/redisson}
repeat=${REPEAT:-3}
topologies=${1:-single sentinel cluster}
loads=${2:-w1 hot waiting}
provider=${PROVIDER:-native}
profiles=redisson:version=3.23,redisson:version=3.43,redisson:version=3.52,redisson:version=4.7
mkdir -p "$out"

# The same servers in containers: the image lockbench builds from this machine's redis-server,
# so native and docker tables differ by the container's network and cgroup, not the Redis build.
provider_args=(--provider "$provider")
case $provider in
native) ;;
docker)
	bin/lockbench image build >&2
	provider_args+=(--image lockbench/redis:local)
	out=$out/docker
	;;
*) echo "unknown PROVIDER $provider (native, docker)" >&2; exit 2 ;;
esac

for topo in $topologies; do
	for load in $loads; do
		case $load in
		w1) args=(--concurrency 64 --keys 10000 --duration 3s --warmup 500ms
			--driver "lockcore,$profiles,naive,redislock,redsync,rueidislock") ;;
		hot) args=(--concurrency 64 --keys 1 --duration 3s --warmup 500ms
			--driver "lockcore,lockcore:handoff=0,$profiles,naive,redislock,redsync,rueidislock") ;;
		waiting) args=(--concurrency 2000 --keys 1000 --hold 20ms --duration 10s --warmup 1s
			--driver "lockcore,$profiles,naive,redislock,redsync") ;;
		*) echo "unknown load $load (w1, hot, waiting)" >&2; exit 2 ;;
		esac
		echo "==> $topo $load: ${args[*]}" >&2
		# Exit 1 (errors, e.g. Redisson's subscribe timeouts in the waiting load) is a result here.
		bin/lockbench run --topology "$topo" "${provider_args[@]}" --repeat "$repeat" --out "$out/$topo-$load" "${args[@]}" || [ $? -eq 1 ]
	done
done
