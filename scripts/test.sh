#!/usr/bin/env bash
# test.sh: go test in every module of the repository but those that need a
# service and have their own ci.sh (temporal/; pgstore/, memory/,
# examples/memory and examples/sessions-postgres in pgstore/ci.sh).
#
# The repository is a Go workspace (go.work). The root module holds agentrt,
# agenttest and nothing that pulls a vendor SDK; provider/openai,
# provider/anthropic, provider/gemini, mcptool, agentotel and cassette (on
# go-vcr) are modules of their own, and so are examples/ and
# internal/readmetest. In workspace mode
# `go test ./...` at the root stops at a nested module, so this script names
# one ./DIR/... pattern per module, all in one go command (one build list,
# test binaries run in parallel). Arguments go to go test:
#
#   bash scripts/test.sh
#   bash scripts/test.sh -race -count=1
#   bash scripts/test.sh --modules    # the module directories, one a line
#   bash scripts/test.sh --patterns   # the package patterns (for go vet, staticcheck)
set -euo pipefail
cd "$(dirname "$0")/.."

modules=(. agentotel mcptool provider/openai provider/anthropic provider/gemini cassette examples internal/readmetest)
patterns=()
for m in "${modules[@]}"; do
	patterns+=("./${m#./}/...")
done
patterns[0]=./...

case "${1:-}" in
--modules)
	printf '%s\n' "${modules[@]}"
	exit 0
	;;
--patterns)
	echo "${patterns[@]}"
	exit 0
	;;
esac
exec go test "$@" "${patterns[@]}"
