#!/usr/bin/env bash
# openloop-lag.sh: how closely the open-loop generator keeps its schedule, and what it costs.
# For each rate, one lockcore open-loop run (5 s, 1 s warm-up) on a redis-server lockbench starts
# itself; prints acquire p50/p99 (from the intended start), service p50/p99 (from the actual
# start), start lag p50/p99 (when the result has it) and lockbench's own CPU in % of one core.
#
#   scripts/openloop-lag.sh [LOCKBENCH] [RATE...]     defaults: ./lockbench, 1000 5000 20000
set -euo pipefail
bin=${1:-./lockbench}
shift || true
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(1000 5000 20000)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-8s %-22s %-22s %-22s %s\n' rate "acq p50/p99 µs" "service p50/p99 µs" "start lag p50/p99 µs" "client cpu %"
for r in "${rates[@]}"; do
	rm -rf "$out"/*
	"$bin" run --driver lockcore --rate "$r" --duration 5s --warmup 1s --out "$out" >/dev/null 2>&1
	f=$(ls "$out"/*.json | head -1)
	jq -r --arg r "$r" '.runs[0] | [$r,
		"\(.acquire_latency_us.p50)/\(.acquire_latency_us.p99)",
		"\(.service_latency_us.p50)/\(.service_latency_us.p99)",
		(if .start_lag_us then "\(.start_lag_us.p50)/\(.start_lag_us.p99)" else "-" end),
		(if .client_cpu_us then (.client_cpu_us / .duration_s / 1e4 | floor | tostring) else "-" end)] | @tsv' "$f" |
		awk -F'\t' '{printf "%-8s %-22s %-22s %-22s %s\n", $1, $2, $3, $4, $5}'
done
