#!/usr/bin/env bash
# safety-matrix.sh runs every column of the safety matrix (lockbench run --scenario NAME, see
# docs/safety-matrix.md) and prints the matrix as a Markdown table: one row per driver, one
# column per scenario, each cell "double grants / corrupt writes / stale writes rejected" as the
# referee and the fenced resource counted them; "n/a" where the driver does not run on the
# scenario's topology; "(no holder stalled)" where a stall found nobody holding a lock in the
# stalled process, so that the cell shows nothing about it. The partition column needs a Docker engine and the local Redis image
# (lockbench image build); without one it is skipped. About 4 minutes on a 2-core machine.
#
#   bash scripts/safety-matrix.sh                        # every column; results in lockbench-results/safety
#   bash scripts/safety-matrix.sh stall-over-lease       # one column
#   LOCKBENCH_SAFETY_OUT=/tmp/s bash scripts/safety-matrix.sh
set -euo pipefail

# The repository's root, Go on PATH, bin/lockbench built.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v jq >/dev/null || { echo "safety-matrix.sh needs jq (apt-get install jq)" >&2; exit 2; }

out=${LOCKBENCH_SAFETY_OUT:-lockbench-results/safety}
if [ $# -gt 0 ]; then
	scenarios=("$@")
else
	# The columns in order; a test (e2e/scenario_script_test.go) keeps this list equal to scenario.Names().
	scenarios=(pause-over-lease stall-over-lease sentinel-failover partition-master redlock-restart)
fi

# The rows, as scenario.Drivers gives them (a test keeps the two equal).
rows=(lockcore:watchdog=1s:sync=wait lockcore:watchdog=1s:sync=off lockcore-fenced:watchdog=1s:sync=wait lockcore-fenced:watchdog=1s:sync=off redisson:watchdog=1s rueidislock:validity=1s redsync:lease=1s redislock:lease=1s naive:lease=1s)

ran=()
for s in "${scenarios[@]}"; do
	if [ "$s" = partition-master ] && ! docker info >/dev/null 2>&1; then
		echo "==> $s: skipped, no Docker engine answers" >&2
		continue
	fi
	rm -rf "${out:?}/$s"
	# The partition replaces its master for good: one run per driver (scenario.PerDriver).
	per=("")
	if [ "$s" = partition-master ]; then
		per=("${rows[@]}")
	fi
	for d in "${per[@]}"; do
		args=(--scenario "$s" --out "$out/$s")
		[ -n "$d" ] && args+=(--driver "$d")
		echo "==> lockbench run ${args[*]}" >&2
		# Exit 1 (violations) is the expected outcome of most columns; anything else is a failure.
		code=0
		bin/lockbench run "${args[@]}" >&2 || code=$?
		if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then
			echo "safety-matrix: lockbench run ${args[*]} exited $code" >&2
			exit "$code"
		fi
	done
	ran+=("$s")
done

# One cell per driver and scenario, from the scenario's result file.
{
	printf '| driver |'
	for s in "${ran[@]}"; do printf ' %s |' "$s"; done
	printf '\n|---|'
	for s in "${ran[@]}"; do printf -- '--:|'; done
	printf '\n'
	for d in "${rows[@]}"; do
		printf '| %s |' "$d"
		for s in "${ran[@]}"; do
			cell=$(jq -rs --arg d "$d" '[.[].runs[] | select(.driver == $d)] | if length == 0 then "n/a" else
				(map(.referee.violations // .violations) | add | tostring) + " / " +
				(map(.resource.corrupt_writes // 0) | add | tostring) + " / " +
				(map(.resource.stale_rejected // 0) | add | tostring) +
				([.[].faults[]? | select(.spec | startswith("stall")) | .stalled_workers // 0] |
					if length > 0 and add == 0 then " (no holder stalled)" else "" end) end' "$out/$s"/*.json)
			printf ' %s |' "$cell"
		done
		printf '\n'
	done
} | tee "$out/matrix.md"
echo "matrix: $out/matrix.md (cells: double grants / corrupt writes / stale writes rejected)" >&2
