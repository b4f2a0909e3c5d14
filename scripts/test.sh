#!/usr/bin/env bash
# test.sh: go test in every module of the repository but the three that
# need a service and have their own ci.sh (temporal/, pgstore/ with memory/,
# examples/memory and examples/sessions-postgres).
#
# The repository is a Go workspace (go.work): the root module holds agentrt,
# agenttest and nothing that pulls a vendor SDK; provider/openai,
# provider/anthropic, provider/gemini, mcptool and agentotel are modules of
# their own, and so are examples/ and internal/readmetest. `go test ./...`
# at the root tests the root module only (in workspace mode ./... stops at a
# nested module), hence this loop. Arguments go to go test:
#
#   bash scripts/test.sh
#   bash scripts/test.sh -race -count=1
set -euo pipefail
cd "$(dirname "$0")/.."

# The modules this script and .ci/run cover, in the order they are tested.
modules=(. agentotel mcptool provider/openai provider/anthropic provider/gemini examples internal/readmetest)

if [ "${1:-}" = "--list" ]; then
	printf '%s\n' "${modules[@]}"
	exit 0
fi

failed=()
for m in "${modules[@]}"; do
	echo "-- $m"
	(cd "$m" && go test "$@" ./...) || failed+=("$m")
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "test.sh: tests failed in: ${failed[*]}"
	exit 1
fi
