#!/usr/bin/env bash
# report-screenshots.sh: the pictures of lockbench's reports (issue 42's acceptance), taken the
# way a reader sees them: in a real browser. It builds bin/lockbench from this tree, runs six
# drivers on a single server and on a cluster (both started by lockbench itself, native
# redis-server processes on free ports) under two labels, v1.2 and v1.3 (the same build: the
# labels are names, this is an illustration), then writes
#
#   OUT/results/LABEL/TOPOLOGY.json   the four result files (.hgrm and .bench.txt in TOPOLOGY.d/)
#   OUT/report/                       lockbench report of the four: 2 labels x 6 drivers x 2 topologies
#   OUT/compare/                      lockbench compare --report of v1.2 (BASE) against v1.3 (NEW)
#   OUT/compare.txt                   compare's text output (its exit code on stderr)
#   OUT/report-grouped.png            headless Chromium's screenshot of OUT/report/index.html
#   OUT/report-compare.png            the same of OUT/compare/index.html
#
#   bash scripts/report-screenshots.sh [OUT] [RUN FLAG...]
#
# OUT defaults to /tmp/lockbench-report-screenshots; a relative OUT is taken from where you
# stand. Further flags go to every lockbench run (e.g. --pin off). Settings, from the
# environment: DRIVERS (lockcore,redisson,naive,redislock,redsync,rueidislock), TOPOLOGIES
# (single cluster), DURATION (2s), WARMUP (500ms), CONCURRENCY (16), REPEAT (6: compare needs 6
# runs a side to decide 24 gated rows, 12 groups x throughput and p99), WINDOW (1400,2200: the
# browser window, so the screenshot's size; each PNG stays under 400 KB), SKIP_RUNS=1 (reuse
# OUT/results: only draw and screenshot again, e.g. after changing the report package).
#
# Bounded: each lockbench run is interrupted (SIGINT: it writes what it measured) after
# RUN_TIMEOUT seconds (600; a run of the defaults took about two minutes on a loaded 2-core
# machine, the whole script eight), each browser killed after 120 s. The browser's profile
# lives in a temporary directory removed on exit; lockbench stops the servers it starts.
# Needs redis-server, chromium (bash scripts/install-deps.sh installs both on Debian) and Go.
# The runs use the CPU for minutes: the figures are only as good as the machine was quiet, and
# the screenshots are illustrations, not measurements.
#
# Exit: 0 all pictures taken; 1 a step failed (named on stderr); 2 bad usage.
set -euo pipefail

out=${1:-/tmp/lockbench-report-screenshots}
shift $(($# > 0 ? 1 : 0))
case "$out" in
-*)
	echo "usage: bash scripts/report-screenshots.sh [OUT] [RUN FLAG...]" >&2
	exit 2
	;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd) # lib.sh moves to the repository's root

drivers=${DRIVERS:-lockcore,redisson,naive,redislock,redsync,rueidislock}
read -r -a topologies <<<"${TOPOLOGIES:-single cluster}"
labels=(v1.2 v1.3)
window=${WINDOW:-1400,2200}
run_timeout=${RUN_TIMEOUT:-600}

log() { printf 'report-screenshots: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

browser=
for b in chromium chromium-browser google-chrome google-chrome-stable; do
	if command -v "$b" >/dev/null 2>&1; then
		browser=$(command -v "$b")
		break
	fi
done
[ -n "$browser" ] || die "no chromium on PATH: bash scripts/install-deps.sh installs Debian's chromium"
command -v redis-server >/dev/null 2>&1 || die "no redis-server on PATH: bash scripts/install-deps.sh --run installs it"

tmp=$(mktemp -d /tmp/lockbench-screenshots.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
lb=$PWD/bin/lockbench
log "built $lb ($("$lb" version | head -1))"

if [ "${SKIP_RUNS:-}" != 1 ]; then
	rm -rf "$out/results"
	# Topology by topology, the labels alternating, so that BASE and NEW see the same machine.
	for topo in "${topologies[@]}"; do
		for label in "${labels[@]}"; do
			dir=$out/results/$label
			mkdir -p "$dir"
			log "run: $label on $topo ($drivers, --repeat ${REPEAT:-6}; stderr in $dir/$topo.err)"
			code=0
			timeout -s INT -k 30 "$run_timeout" "$lb" run --driver "$drivers" --topology "$topo" --label "$label" \
				--duration "${DURATION:-2s}" --warmup "${WARMUP:-500ms}" --concurrency "${CONCURRENCY:-16}" \
				--repeat "${REPEAT:-6}" --out "$dir/$topo.d" "$@" \
				>"$dir/$topo.txt" 2>"$dir/$topo.err" || code=$?
			# 1: a run counted errors; its results are written and the report shows them.
			case $code in
			0) ;;
			1) log "run: $label on $topo: exit 1 (see $dir/$topo.err); going on with its results" ;;
			*) die "run: $label on $topo: exit $code: $(tail -3 "$dir/$topo.err")" ;;
			esac
			# The result file beside the others of its label (compare pools a directory's *.json
			# files); its .hgrm and .bench.txt files stay in TOPOLOGY.d.
			written=("$dir/$topo.d"/*.json)
			[ "${#written[@]}" -eq 1 ] && [ -f "${written[0]}" ] ||
				die "run: $label on $topo: want one result file in $dir/$topo.d, found: ${written[*]}"
			mv "${written[0]}" "$dir/$topo.json"
		done
	done
fi

files=()
for label in "${labels[@]}"; do
	for topo in "${topologies[@]}"; do
		[ -f "$out/results/$label/$topo.json" ] || die "no result file $out/results/$label/$topo.json (SKIP_RUNS=1 without runs?)"
		files+=("$out/results/$label/$topo.json")
	done
done

rm -rf "$out/report" "$out/compare"
# The title says what the page is: the labels name one build, and the machine is whatever it was.
IFS=, read -r -a driver_list <<<"$drivers"
# and A B C prints "A, B and C".
and() {
	local s=$1
	shift
	while [ $# -gt 1 ]; do
		s+=", $1"
		shift
	done
	[ $# -eq 0 ] || s+=" and $1"
	printf '%s' "$s"
}
"$lb" report -o "$out/report" --title "lockbench report: ${#driver_list[@]} drivers on $(and "${topologies[@]}"), labelled $(and "${labels[@]}") (one build: an illustration)" \
	"${files[@]}" >/dev/null ||
	die "lockbench report failed"
code=0
"$lb" compare --report "$out/compare" "$out/results/${labels[0]}" "$out/results/${labels[1]}" \
	>"$out/compare.txt" 2>"$tmp/compare.err" || code=$?
[ "$code" -le 1 ] || die "lockbench compare: exit $code: $(cat "$tmp/compare.err")"
log "compare: exit $code ($out/compare.txt)"

# screenshot PAGE PNG: PAGE as headless Chromium draws it in a window of $window.
screenshot() {
	local page=$1 png=$2
	rm -f "$png"
	HOME=$tmp timeout -k 10 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--hide-scrollbars --user-data-dir="$tmp/profile" --window-size="$window" \
		--screenshot="$png" "file://$page" >"$tmp/browser.log" 2>&1 || true
	[ -s "$png" ] || die "no screenshot of $page: $(tail -5 "$tmp/browser.log")"
	log "screenshot: $png ($(($(stat -c %s "$png") / 1024)) KiB)"
}
screenshot "$out/report/index.html" "$out/report-grouped.png"
screenshot "$out/compare/index.html" "$out/report-compare.png"
