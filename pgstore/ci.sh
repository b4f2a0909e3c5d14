#!/usr/bin/env bash
# ci.sh: checks and tests of the Postgres session store and the memory
# modules (each has its own go.mod, so that programs using only the root
# package never download pgx or SQLite):
#
#   pgstore/                    github.com/agentrt/agentrt/pgstore (+ pgtest)
#   memory/                     github.com/agentrt/agentrt/memory (+ sqlitemem, pgmem, memorytest)
#   examples/memory/            the Markdown Q&A example
#   examples/sessions-postgres/ the sessions example on PostgreSQL
#
# It installs Debian's postgresql package with apt-get if no PostgreSQL is
# found (the tests start their own throwaway server as a non-root user:
# "postgres" if it exists, else "nobody"), then runs gofmt, go vet,
# staticcheck and go test -race in each module with CI=true, so that tests
# needing PostgreSQL fail instead of skipping, and runs both examples.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

have_pg() {
	[[ -n "${AGENTRT_PG_BIN:-}" ]] && return 0
	compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null && return 0
	command -v initdb >/dev/null
}
if ! have_pg; then
	step "apt-get install postgresql"
	if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
	# Debian starts a cluster of its own; the tests do not use it.
	$SUDO service postgresql stop >/dev/null 2>&1 || true
fi

export CI=true
for mod in pgstore memory examples/memory examples/sessions-postgres; do
	step "$mod: gofmt, vet, staticcheck, go test -race"
	(
		cd "$mod"
		unformatted=$(gofmt -l .)
		if [[ -n "$unformatted" ]]; then
			echo "these files need gofmt:"; echo "$unformatted"; exit 1
		fi
		go vet ./...
		go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
		go test -race -count=1 ./...
	)
done

step "examples run offline"
go -C examples/memory run . >/dev/null
go -C examples/sessions-postgres run . >/dev/null
echo "pgstore/ci.sh passed"
