#!/usr/bin/env bash
# test.sh is the one command that checks lockbench: it installs what the tests need, then runs
# gofmt, go vet and the whole test suite with the race detector. Run it from anywhere.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

# install-deps.sh ran in its own shell: repeat its PATH fix here.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="$PATH:/usr/local/go/bin"
fi

echo "==> gofmt -l ." >&2
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "these files need gofmt -w:" >&2
	echo "$unformatted" >&2
	exit 1
fi

echo "==> go vet ./..." >&2
go vet ./...

echo "==> go test -race -count=1 -timeout 20m ./..." >&2
go test -race -count=1 -timeout 20m ./...
