#!/usr/bin/env bash
# coldbuild.sh: what a user's first build costs. It builds, each from an
# empty build cache (a fresh GOCACHE; the module cache is shared, as a user's
# is after `go mod download`), the offline quickstart (the README's first
# command) and a program that imports only the root package, and prints the
# user CPU time of each and their ratio.
#
#   bash scripts/coldbuild.sh
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/rootonly"
cat >"$tmp/rootonly/main.go" <<'GO'
package main

import (
	"context"
	"fmt"

	"github.com/agentrt/agentrt"
	"github.com/agentrt/agentrt/agenttest"
)

func main() {
	ag := &agentrt.Agent{Planner: agenttest.Script(agenttest.Reply("hi"))}
	for ev := range ag.Run(context.Background(), "s", "hello") {
		if d, ok := ev.(agentrt.Done); ok {
			fmt.Println(d.FinalText)
		}
	}
}
GO
mkdir -p internal/coldbuildprobe
cp "$tmp/rootonly/main.go" internal/coldbuildprobe/main.go
trap 'rm -rf "$tmp" internal/coldbuildprobe' EXIT

measure() { # name package: prints "user sys wall" seconds
	local cache="$tmp/cache-$1"
	mkdir -p "$cache"
	local TIMEFORMAT='%U %S %R'
	{ time GOCACHE="$cache" go build -o "$tmp/$1.bin" "$2" 2>/dev/null; } 2>&1 | tail -1
}

q=$(measure quickstart ./examples/quickstart)
r=$(measure rootonly ./internal/coldbuildprobe)
read -r qu qs qe <<<"$q"
read -r ru rs re <<<"$r"
printf 'quickstart:   user %6.1fs  sys %5.1fs  wall %6.1fs\n' "$qu" "$qs" "$qe"
printf 'root only:    user %6.1fs  sys %5.1fs  wall %6.1fs\n' "$ru" "$rs" "$re"
awk -v a="$qu" -v b="$ru" 'BEGIN { printf "ratio (user CPU): %.2fx\n", a / b }'
