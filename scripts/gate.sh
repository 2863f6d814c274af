#!/usr/bin/env bash
# gate.sh is lockbench's performance gate on itself: one short run of lockcore side by side with
# the naive SET NX lock and the redisson driver (Redisson's protocol over go-redis), with
# thresholds on ratios between them. Drivers of one round run back to back on the same machine,
# so a loaded machine moves their ratio far less than their acq/s; each ratio is the median of 5
# per-round ratios. What lockcore showed (64 workers, 10000 keys), unloaded (docs/thresholds.md) and in four
# runs on this 2-core machine while two other builds and test suites ran on it (load 1.4 to 5):
#
#   ratio (lockcore / other)    unloaded   loaded (4 runs)            limit
#   throughput vs naive         2.2x       1.85x 1.23x 1.77x 1.19x    >= 0.9
#   throughput vs redisson      3.0x       2.49x 2.11x 2.76x 2.26x    >= 1.5
#   client CPU/acq vs naive     0.37x      0.44x 0.40x 0.55x 0.51x    <= 0.8
#   client CPU/acq vs redisson  0.27x      0.33x 0.31x 0.41x 0.35x    <= 0.7
#
# Under load the throughput ratio against naive shrinks most (per round down to 1.01x), so its
# limit is only a backstop below 1; what catches lockcore losing its lead is the ratio against
# Redisson's protocol (a lockcore that fell to naive's speed unloaded would be about 1.4x redisson)
# and the CPU per acquisition, which load moves far less than throughput.
# A second run gates the hot lock (64 workers on 1 key), where lockcore's local queue and hand-over
# carry it: unloaded it ran about 40x the redisson driver (docs/findings.md, Hot locks); the limit of 5x
# catches the hand-over breaking (without it lockcore ran 0.8x redisson) with room for load.
# Redis CPU per acquisition is gated too: it is what a Redis deployment's capacity per core rests
# on (docs/capacity.md), and a change to lockcore's scripts or batching that costs
# the server more moves it whatever the throughput does. Both runs use --pin auto (the default):
# redis-server on its own CPU, so its CPU per acquisition is not smeared by the client's.
#
#   ratio (lockcore / other)    pinned, unloaded (2026-11-25)   pinned, loaded (1 run)   limit
#   Redis CPU/acq vs naive      0.33x                           0.36x                    <= 0.6
#   Redis CPU/acq vs redisson   0.16x (profile 3.52; the default is 4.7 since 2026-11-27, also 12 commands/acq)   <= 0.3
#
# The ratio against naive moves with the machine: 0.19x on 2026-11-28's morning VM (system calls
# two to three times dearer, which naive pays per command and lockcore per batch), 0.42-0.44x in six
# runs on the afternoon's, and 0.50x in one fresh-clone CI run there whose rounds were slowed
# (lockcore 96-127k acq/s against 130-144k in the others; a slowed client makes smaller batches,
# each paying Redis's per-script cost), which failed the limit of 0.5 then. 0.6 fails a rise of
# two fifths over that VM's figure. Against redisson the limit is close to a doubling (its
# profiles 3.52 and 4.7, the default, do 12 commands per acquisition to lockcore's 6).
#
# Exit codes are lockbench run's: 3 when a threshold fails, 1 on errors or violations.
#
#   bash scripts/gate.sh                 # results in lockbench-results/gate
#   LOCKBENCH_GATE_OUT=/tmp/g bash scripts/gate.sh
set -euo pipefail

# The repository's root, Go on PATH, bin/lockbench built.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out=${LOCKBENCH_GATE_OUT:-lockbench-results/gate}

echo "==> performance gate: lockcore vs naive and redisson, 5 interleaved rounds of 2 s" >&2
bin/lockbench run --pin auto \
	--driver lockcore,naive,redisson \
	--concurrency 64 --keys 10000 \
	--duration 2s --warmup 500ms --repeat 5 \
	--out "$out" \
	--threshold 'lockcore/naive throughput>=0.9' \
	--threshold 'lockcore/redisson throughput>=1.5' \
	--threshold 'lockcore/naive client-cpu<=0.8' \
	--threshold 'lockcore/redisson client-cpu<=0.7' \
	--threshold 'lockcore/naive redis-cpu<=0.6' \
	--threshold 'lockcore/redisson redis-cpu<=0.3' \
	--threshold 'violations==0'

echo "==> performance gate: lockcore on a hot lock vs redisson, 3 interleaved rounds of 1 s" >&2
exec bin/lockbench run --pin auto \
	--driver lockcore,redisson \
	--concurrency 64 --keys 1 \
	--duration 1s --warmup 300ms --repeat 3 \
	--out "$out" \
	--threshold 'lockcore/redisson throughput>=5' \
	--threshold 'violations==0'
