#!/usr/bin/env bash
# ci.sh: the browser test of the agentrt command's HTML timeline. The
# command is in the root module (so `go install
# github.com/agentrt/agentrt/cmd/agentrt@latest` needs nothing else), and
# its other tests run with the root's; the browser test is the module
# cmd/agentrt/browsertest, so that chromedp never enters the root's graph.
#
# It installs Debian's chromium with apt-get if no browser is found, then
# runs gofmt, go vet, staticcheck and go test -race with CI=true, so that
# the browser test of the HTML timeline fails instead of skipping when
# chromium is missing. The test's screenshot (agentrt-html.png) goes to
# $AGENTRT_ARTIFACTS when set.
#
# Environment:
#   AGENTRT_ARTIFACTS           directory for test artifacts (screenshot)
#   AGENTRT_UPDATE_SCREENSHOT=1 also rewrite testdata/screenshot.png
set -euo pipefail
cd "$(dirname "$0")/browsertest"

step() { printf '\n== cmd/agentrt: %s\n' "$*"; }

if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && ! command -v google-chrome >/dev/null; then
	step "apt-get install chromium"
	if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

step "gofmt -l ."
unformatted=$(gofmt -l .)
if [[ -n "$unformatted" ]]; then
	echo "these files need gofmt:"; echo "$unformatted"; exit 1
fi

step "go vet ./..."
go vet ./...

step "staticcheck ./..."
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

step "go test -race ./...   (the browser test runs: CI is set)"
CI=true go test -race -count=1 ./...

step "go build of the command, with the workspace off (as go install builds it)"
(cd ../../.. && GOWORK=off go build -o /dev/null ./cmd/agentrt)
