#!/usr/bin/env bash
# lockbench.sh is the newcomer's entry point: it installs what running lockbench needs
# (redis-server, if missing; Go is checked, not installed), builds bin/lockbench from this
# repository and runs it with the arguments given, e.g.
#   bash scripts/lockbench.sh run
# lockbench runs where you stand, not in the repository: relative paths (--out, --report, result
# files) are yours, and the default --out, lockbench-results/, is created in your directory.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The installing and building happen in the repository (install-deps.sh and go build expect
# it), in a subshell, so that this shell stays in the caller's directory.
(
	cd "$root"
	bash scripts/install-deps.sh --run

	if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
		export PATH="$PATH:/usr/local/go/bin"
	fi

	# Static, as scripts/lib.sh builds it (see there why).
	mkdir -p bin
	# The version every result records (lockbench version): the commit, as the image's build names it.
	version=$(git describe --always --dirty 2>/dev/null || echo dev)
	CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$version" -o bin/lockbench ./cmd/lockbench
)
exec "$root/bin/lockbench" "$@"
