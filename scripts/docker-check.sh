#!/usr/bin/env bash
# docker-check.sh makes sure the Docker tests can run, before scripts/test.sh runs them: a
# Docker engine answers (under CI, started through the init system if installed but down), and
# the local Redis image is built ('lockbench image build': no registry is needed). It never
# installs Docker.
#
# Under CI (CI set and not "false"/"0") a missing engine is an error: CI machines have one,
# and the Docker tests must not pass by skipping. Elsewhere it says so and returns 0; the
# Docker tests then skip with the same reason.
set -euo pipefail

# The repository's root, Go on PATH, and bin/lockbench, built as the lockbench image builds its
# binary: the image build below then compiles nothing of lockbench again, it only links.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

log() { printf 'docker-check: %s\n' "$*" >&2; }

in_ci() {
	case "${CI:-}" in
	"" | 0 | false | FALSE | False) return 1 ;;
	esac
	return 0
}

no_engine() {
	if in_ci; then
		log "FAIL: CI is set but no Docker engine answers ($*); the Docker tests must run in CI"
		exit 1
	fi
	log "no Docker engine answers ($*): the Docker tests will be skipped"
	exit 0
}

engine_up() { docker info >/dev/null 2>&1; }

command -v docker >/dev/null 2>&1 || no_engine "the docker CLI is not installed"

if ! engine_up; then
	# Only under CI, as root, for the local engine (DOCKER_HOST unset): a developer's engine is
	# theirs to start, and one named by DOCKER_HOST is not this machine's init system's.
	if in_ci && [ -z "${DOCKER_HOST:-}" ] && command -v dockerd >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
		log "dockerd is installed but not answering: starting it"
		if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
			systemctl start docker || true
		elif command -v service >/dev/null 2>&1; then
			service docker start || true
		fi
		for _ in $(seq 1 60); do
			engine_up && break
			sleep 0.5
		done
	fi
	engine_up || no_engine "$(docker info 2>&1 | tail -n 1)"
fi
log "Docker engine: $(docker version --format 'server {{.Server.Version}}, API {{.Server.APIVersion}}' 2>/dev/null)"

if docker compose version >/dev/null 2>&1; then
	log "compose: $(docker compose version 2>&1 | head -n 1)"
elif command -v docker-compose >/dev/null 2>&1; then
	log "compose: $(docker-compose version 2>&1 | head -n 1)"
elif in_ci; then
	log "FAIL: CI is set but neither 'docker compose' nor 'docker-compose' runs"
	exit 1
else
	log "neither 'docker compose' nor 'docker-compose' runs: the compose file tests will be skipped"
fi

log "building the local Redis image (lockbench image build)"
bin/lockbench image build -q >/dev/null
log "image: $(docker image inspect --format '{{index .RepoTags 0}} {{.Id}}' lockbench/redis:local)"

# The generators' image (--generators docker, the Swarm stack): a static lockbench built from
# this checkout. The first build on a machine compiles everything with CGO_ENABLED=0 (minutes
# on 2 cores); later ones reuse Go's build cache and are a no-op when the source is unchanged.
log "building the lockbench image (lockbench image build lockbench)"
bin/lockbench image build lockbench -q >/dev/null
log "image: $(docker image inspect --format '{{index .RepoTags 0}} {{.Id}}' lockbench/lockbench:local)"
