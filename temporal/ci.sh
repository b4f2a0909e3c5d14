#!/usr/bin/env bash
# ci.sh: checks and tests of the temporal module, end to end against a real
# Temporal server.
#
# It builds the Temporal CLI from the Go module proxy (once; the binary and
# the Go build cache are reused later), starts `temporal server start-dev`
# (a real single-process server with an in-memory store) on a free loopback
# port, waits until it answers, runs `go vet`, staticcheck (if installed) and
# `go test -race ./...` with AGENTRT_TEMPORAL_ADDR set so that the
# end-to-end tests run, and always stops the server.
#
# Environment:
#   TEMPORAL_CLI      path of a temporal binary to use (default: PATH, then
#                     $(go env GOPATH)/bin/temporal, built if missing)
#   TEMPORAL_VERSION  CLI version to build (default v1.5.1)
#   AGENTRT_TEMPORAL_RECORD=1  also rewrite testdata/ histories
set -euo pipefail

cd "$(dirname "$0")"
version="${TEMPORAL_VERSION:-v1.5.1}"
gobin="$(go env GOPATH)/bin"

cli="${TEMPORAL_CLI:-}"
if [[ -z "$cli" ]]; then
	if command -v temporal >/dev/null 2>&1; then
		cli="$(command -v temporal)"
	elif [[ -x "$gobin/temporal" ]]; then
		cli="$gobin/temporal"
	else
		echo "ci.sh: building the Temporal CLI $version (a few minutes the first time)" >&2
		GOBIN="$gobin" go install "github.com/temporalio/cli/cmd/temporal@$version"
		cli="$gobin/temporal"
	fi
fi

# A free loopback port for the server's gRPC API (its HTTP API and metrics
# take random free ports; --headless starts no UI).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' 2>/dev/null ||
		echo $((20000 + RANDOM % 20000))
}
port="$(free_port)"

logfile="$(mktemp -t temporal-dev.XXXXXX.log)"
"$cli" server start-dev --headless --ip 127.0.0.1 --port "$port" \
	--log-level warn >"$logfile" 2>&1 &
server_pid=$!
cleanup() {
	if kill -0 "$server_pid" 2>/dev/null; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -f "$logfile"
}
trap cleanup EXIT INT TERM

addr="127.0.0.1:$port"
echo "ci.sh: waiting for the Temporal server on $addr" >&2
ready=""
for _ in $(seq 1 120); do
	if ! kill -0 "$server_pid" 2>/dev/null; then
		echo "ci.sh: the Temporal server exited:" >&2
		cat "$logfile" >&2
		exit 1
	fi
	if "$cli" operator cluster health --address "$addr" >/dev/null 2>&1; then
		ready=1
		break
	fi
	sleep 0.5
done
if [[ -z "$ready" ]]; then
	echo "ci.sh: the Temporal server did not answer within 60s:" >&2
	cat "$logfile" >&2
	exit 1
fi

go vet ./...
if command -v staticcheck >/dev/null 2>&1; then
	staticcheck ./...
elif [[ -x "$gobin/staticcheck" ]]; then
	"$gobin/staticcheck" ./...
else
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
fi
test -z "$(gofmt -l .)" || { gofmt -l . >&2; echo "ci.sh: gofmt needed" >&2; exit 1; }

AGENTRT_TEMPORAL_ADDR="$addr" CI=true go test -race -count=1 ./...
