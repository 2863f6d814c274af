#!/usr/bin/env bash
# capacity.sh measures capacity per Redis core, the "Capacity: W1 placed and not placed" table of docs/findings.md: W1
# (64 workers, 10000 keys) for lockcore, lockcore:batch=0, redisson (4.7), rueidislock, naive and the
# floor (bare SET NX PX + DEL, not a lock: the Redis CPU every driver is stated against), with client and
# server unplaced (--pin off) and placed apart (--pin auto: redis-server on the last CPU, lockbench
# on the others), 3 interleaved rounds each; then the check that the projected server-bound
# capacity holds: each of two drivers whose server CPU per acquisition does not depend on load
# (lockcore:batch=0, naive) is projected from an open loop that keeps Redis partly busy, and then
# driven to saturation in a closed loop with two generator processes; the saturated throughput
# is compared with the projection. About 6 minutes; run it on an otherwise idle machine.
#
#   bash scripts/capacity.sh                       # result files in lockbench-results/capacity
#   LOCKBENCH_CAPACITY_OUT=/tmp/c LOCKBENCH_CAPACITY_DURATION=2s bash scripts/capacity.sh
set -euo pipefail

# The repository's root, Go on PATH, bin/lockbench built.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v jq >/dev/null || { echo "capacity.sh needs jq (apt-get install jq)" >&2; exit 2; }

out=${LOCKBENCH_CAPACITY_OUT:-lockbench-results/capacity}
rm -rf "$out"
mkdir -p "$out"

dur=${LOCKBENCH_CAPACITY_DURATION:-5s}
w1=(--concurrency 64 --keys 10000 --duration "$dur" --warmup 1s)
drivers=lockcore,lockcore:batch=0,redisson,rueidislock,naive,floor
for pin in off auto; do
	echo "==> W1, --pin $pin: $drivers, 3 interleaved rounds" >&2
	bin/lockbench run --pin "$pin" --driver "$drivers" "${w1[@]}" --repeat 3 --out "$out/pin-$pin"
done

# median VALUES...: the middle of the values given (the mean of the two middle ones when even).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

echo >&2
printf '%-18s %14s %12s %14s %16s %8s\n' driver "projected/s" "from busy" "saturated/s" "saturated busy" "error"
for d in lockcore:batch=0 naive; do
	# The open loop's rate: about half of what the pinned closed loop reached.
	tput=$(jq -r --arg d "$d" '[.runs[] | select(.driver == $d) | .throughput_per_s] | .[]' "$out"/pin-auto/*.json)
	rate=$(median $tput | awk '{printf "%d", $1/2}')
	echo "==> $d: projection from an open loop at $rate/s, then saturation with 2 generator processes" >&2
	bin/lockbench run --pin auto --driver "$d" --rate "$rate" "${w1[@]}" --repeat 3 --out "$out/project-$d" >&2
	bin/lockbench run --pin auto --driver "$d" --procs 2 --concurrency 128 --keys 10000 --duration "$dur" --warmup 1s \
		--repeat 3 --out "$out/saturate-$d" >&2
	proj=$(median $(jq -r '.runs[] | .capacity.projected_per_s // empty' "$out/project-$d"/*.json))
	busy=$(median $(jq -r '.runs[] | .capacity.utilization // empty' "$out/project-$d"/*.json))
	sat=$(median $(jq -r '.runs[] | .throughput_per_s' "$out/saturate-$d"/*.json))
	satbusy=$(median $(jq -r '.runs[] | .capacity.utilization // empty' "$out/saturate-$d"/*.json))
	awk -v d="$d" -v p="$proj" -v b="$busy" -v s="$sat" -v sb="$satbusy" 'BEGIN {
		printf "%-18s %14.0f %11.0f%% %14.0f %15.0f%% %+7.1f%%\n", d, p, 100*b, s, 100*sb, 100*(s-p)/p }'
done
