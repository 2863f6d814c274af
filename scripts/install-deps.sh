#!/usr/bin/env bash
# install-deps.sh installs what building and testing lockbench needs: redis-server (tests and
# lockbench's default topology start their own private servers from it), a C compiler (go test
# -race needs cgo) and, on Debian, chromium (a test renders lockbench report's page in it) and
# prometheus (a test scrapes lockbench's metrics endpoint with it). It only installs what is
# missing, so running it again is cheap. Go itself is checked, not installed.
#
#   bash scripts/install-deps.sh         # what the tests need (scripts/test.sh runs this)
#   bash scripts/install-deps.sh --run   # only what running lockbench needs: redis-server
#                                        # (lockbench builds without cgo: no C compiler)
#
# Debian's redis-server package may start a system service on port 6379. That is harmless:
# lockbench never uses it.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

run_only=
case "${1:-}" in
"") ;;
--run) run_only=1 ;;
*)
	echo "usage: bash scripts/install-deps.sh [--run]" >&2
	exit 2
	;;
esac

# Go installed from https://go.dev/dl lives here but is not always on PATH (fresh CI machines).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="$PATH:/usr/local/go/bin"
fi

log() { printf 'install-deps: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# as_root runs a command as root: directly when we are root, else through sudo if there is one.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root to run '$*': run this script as root or install sudo"
	fi
}

apt_updated=
# apt_install installs Debian packages, refreshing the package lists once per run.
apt_install() {
	if [ -z "$apt_updated" ]; then
		as_root apt-get update
		apt_updated=1
	fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

# --- redis-server ---------------------------------------------------------------------------
if command -v redis-server >/dev/null 2>&1; then
	log "redis-server present: $(command -v redis-server): $(redis-server --version)"
else
	case "$(uname -s)" in
	Linux)
		command -v apt-get >/dev/null 2>&1 ||
			die "redis-server not found and this is not a Debian/Ubuntu system: install Redis 7 (redis-server) with your package manager"
		log "redis-server not found: installing Debian's redis-server package"
		# The package's postinst fails when its system service cannot start (say, port 6379 is
		# taken). We never use that service, so only a missing binary is fatal (checked below).
		apt_install redis-server ||
			log "apt-get reported an error installing redis-server; going on if the binary is there"
		;;
	Darwin)
		command -v brew >/dev/null 2>&1 ||
			die "redis-server not found: install Homebrew (https://brew.sh), then run: brew install redis"
		log "redis-server not found: brew install redis"
		brew install redis
		;;
	*)
		die "redis-server not found: install Redis 7 (redis-server) for $(uname -s)"
		;;
	esac
	command -v redis-server >/dev/null 2>&1 || die "redis-server still not on PATH after installing it"
	log "installed $(command -v redis-server): $(redis-server --version)"
fi

# --- Go ---------------------------------------------------------------------------------------
command -v go >/dev/null 2>&1 ||
	die "go not found: install Go $(sed -n 's/^go //p' go.mod) or newer from https://go.dev/dl (it goes to /usr/local/go; add /usr/local/go/bin to PATH)"
# GOTOOLCHAIN=local: report the Go that is installed, rather than let go.mod's go line make
# this command try to download a newer one.
have=$(GOTOOLCHAIN=local go env GOVERSION)
want=go$(sed -n 's/^go //p' go.mod)
log "go present: $(command -v go): $have"
if [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n1)" != "$want" ]; then
	die "go.mod needs $want but $have is installed: get a newer Go from https://go.dev/dl"
fi

if [ -n "$run_only" ]; then
	log "ok (what running lockbench needs; the tests need more: bash scripts/install-deps.sh)"
	exit 0
fi

# --- C compiler, for go test -race --------------------------------------------------------------
if [ "$(uname -s)" = Linux ] && ! command -v gcc >/dev/null 2>&1 && ! command -v cc >/dev/null 2>&1; then
	if command -v apt-get >/dev/null 2>&1; then
		log "no C compiler (go test -race needs cgo): installing gcc"
		apt_install gcc libc6-dev
	else
		die "no C compiler: install gcc (go test -race needs cgo)"
	fi
fi

# --- chromium, for the report's browser test ---------------------------------------------------
# report's TestPageRendersInChromium renders the HTML report headless; under CI a missing browser
# fails it. Only Debian's package is installed here; elsewhere the test skips without one. With it
# fonts-liberation (which chromium only recommends): the report's charts are laid out in
# Liberation Sans, and the page renders them in it.
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || command -v google-chrome >/dev/null 2>&1; then
	log "chromium present"
elif [ "$(uname -s)" = Linux ] && command -v apt-get >/dev/null 2>&1; then
	log "no chromium (the report's browser test needs it): installing Debian's chromium and fonts-liberation packages"
	apt_install chromium fonts-liberation
else
	log "no chromium: the report's browser test will skip (install Chromium or Chrome to run it)"
fi

# --- prometheus, for the metrics test -----------------------------------------------------------
# cmd/lockbench's TestPrometheusScrapesRun scrapes a lockbench run --metrics-addr with a real
# Prometheus and checks its queries against the result file; under CI (CI=true) a missing
# binary fails it. Debian's package also installs a system service, which lockbench never uses.
if command -v prometheus >/dev/null 2>&1; then
	log "prometheus present: $(command -v prometheus)"
elif [ "$(uname -s)" = Linux ] && command -v apt-get >/dev/null 2>&1; then
	log "no prometheus (the metrics test needs it): installing Debian's prometheus package"
	apt_install prometheus ||
		log "apt-get reported an error installing prometheus; going on if the binary is there"
	command -v prometheus >/dev/null 2>&1 || die "prometheus still not on PATH after installing it"
else
	log "no prometheus: the metrics test will skip (install Prometheus 2.x to run it)"
fi

# --- python3-redis, for the redis-py external-driver adapter ----------------------------------
# extdriver's TestRedisPyAdapter runs adapters/redispy_lock.py with Debian's python3 and its
# python3-redis package; under CI a missing module fails it.
if /usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || python3 -c 'import redis' >/dev/null 2>&1; then
	log "python3 redis module present"
elif [ "$(uname -s)" = Linux ] && command -v apt-get >/dev/null 2>&1; then
	log "no python3 redis module (the redis-py adapter's test needs it): installing Debian's python3-redis package"
	apt_install python3 python3-redis
else
	log "no python3 redis module: the redis-py adapter's test will skip (pip install redis to run it)"
fi

log "ok"
