#!/usr/bin/env bash
# rootgraph.sh: the module graph a user inherits from the root package. It
# makes a tiny program that imports only github.com/agentrt/agentrt (its own
# module, the repository as a replace, no go.work), runs `go mod tidy` and
# `go mod graph`, prints the modules in the graph, and fails if a provider
# SDK, the MCP SDK, OpenTelemetry, Temporal or gRPC is among them: those
# live in modules of their own (provider/*, mcptool, agentotel, temporal).
#
#   bash scripts/rootgraph.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/main.go" <<'GO'
package main

import (
	"fmt"

	"github.com/agentrt/agentrt"
)

func main() { fmt.Println(agentrt.NewUserMessage("hi").Text()) }
GO
cat >"$tmp/go.mod" <<MOD
module example.com/tiny

go 1.26.0

require github.com/agentrt/agentrt v0.0.0-00010101000000-000000000000

replace github.com/agentrt/agentrt => $repo
MOD

cd "$tmp"
export GOWORK=off
go mod tidy
modules=$(go mod graph | awk '{print $2}' | sed 's/@.*//' | grep -vx 'go\|toolchain' | sort -u)
echo "$modules"
echo "($(echo "$modules" | wc -l) modules in the graph of a program importing only the root package)"
bad=$(echo "$modules" | grep -E 'openai|anthropic|genai|google.golang.org/grpc|modelcontextprotocol|opentelemetry|temporal' || true)
if [ -n "$bad" ]; then
	echo "rootgraph.sh: these should not be in the root module's graph:"; echo "$bad"
	exit 1
fi
