# lib.sh is the preamble the scripts that build and run lockbench share; source it, do not run it:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# It moves to the repository's root (so bin/ and lockbench-results/ land there wherever the script was
# started), puts Go on PATH where install-deps.sh left it, and builds bin/lockbench from this tree,
# so a script never runs a stale binary. Errors end the sourcing script (set -euo pipefail).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="$PATH:/usr/local/go/bin"
fi

# Built as the lockbench image builds its binary (static: CGO_ENABLED=0, -trimpath; generators.
# BuildImage), so the image, the scripts and docker-check share Go's compiled packages and only
# link again: each other set of flags is a full compile of lockbench, 2 to 3 minutes on CI's 2
# cores. lockbench uses no cgo; Go's own resolver serves its name lookups.
mkdir -p bin
# The version every result records (lockbench version): the commit, as the image's build names it.
version=$(git describe --always --dirty 2>/dev/null || echo dev)
CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$version" -o bin/lockbench ./cmd/lockbench
