#!/usr/bin/env bash
# sweep-twice.sh: the capacity-planning acceptance run of issue 28. The same sweep twice in a
# row, each on a redis-server lockbench starts itself; the summaries go to OUT/sweep-N.txt, the
# progress to OUT/sweep-N.err, the result files under OUT/results-N.
#
#   scripts/sweep-twice.sh [LOCKBENCH] [OUT] [FLAG...]   defaults: ./lockbench, ./sweep-twice
#
# Further flags go to both sweeps, e.g. --pin off.
set -euo pipefail
bin=${1:-./lockbench}
out=${2:-./sweep-twice}
shift 2 || shift $#
mkdir -p "$out"
for n in 1 2; do
	"$bin" sweep --driver lockcore,naive --rate-from 5000 --rate-to 160000 --steps 6 \
		--slo p99=2ms --duration 3s --warmup 1s --out "$out/results-$n" "$@" \
		>"$out/sweep-$n.txt" 2>"$out/sweep-$n.err" || echo "sweep $n: exit $?" >&2
	sed -n '/^knee:/,$p' "$out/sweep-$n.txt"
done
