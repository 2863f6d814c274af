#!/usr/bin/env bash
# workload-matrix.sh runs every workload on every driver that can run it, on single, sentinel and
# cluster topologies lockbench starts, in short runs: a check that each combination runs with 0
# violations, 0 errors and no leftover keys (drivers without a workload's lock kind are skipped
# with their reason). About 6 minutes on a 2-core machine. It prints each run's summary and exits
# non-zero at the first run that fails. The "Every workload on every topology" table of docs/workloads.md is
# from it.
#
#   bash scripts/workload-matrix.sh               # result files in lockbench-results/matrix
#   LOCKBENCH_MATRIX_OUT=/tmp/m bash scripts/workload-matrix.sh
set -euo pipefail

# The repository's root, Go on PATH, bin/lockbench built.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out=${LOCKBENCH_MATRIX_OUT:-lockbench-results/matrix}

drivers=lockcore,lockcore-fair,lockcore-fenced,redisson,redisson-fair,redisson-fenced,redisson-spin,naive,redislock,redsync,rueidislock
for topology in single sentinel cluster; do
	for workload in contention reentrancy rw multilock longhold; do
		args=(--keys 100 --concurrency 16 --duration 2s --warmup 300ms --driver "$drivers")
		if [ "$workload" = longhold ]; then
			# Holds of 1.5 s outlast lockcore's 600 ms watchdog lease: it must renew them. The
			# other drivers keep their default leases (30 s), which the holds do not outlast.
			args=(--keys 100 --concurrency 8 --duration 3s --warmup 0s --hold 1500ms
				--driver "lockcore:watchdog=600ms,${drivers#lockcore,}")
		fi
		echo "==> $workload on $topology" >&2
		bin/lockbench run --topology "$topology" --workload "$workload" "${args[@]}" \
			--out "$out/$topology-$workload"
	done
done
