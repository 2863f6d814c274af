# lib.sh is the preamble the scripts that build and run lockbench share; source it, do not run it:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# It moves to the repository's root (so bin/ and results/ land there wherever the script was
# started), puts Go on PATH where install-deps.sh left it, and builds bin/lockbench from this tree,
# so a script never runs a stale binary. Errors end the sourcing script (set -euo pipefail).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="$PATH:/usr/local/go/bin"
fi

mkdir -p bin
go build -o bin/lockbench ./cmd/lockbench
