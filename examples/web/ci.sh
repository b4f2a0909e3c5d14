#!/usr/bin/env bash
# ci.sh: checks and tests of the examples/web module (its own go.mod, so
# that chromedp is a dependency of this example only), with the browser
# test in a real headless Chromium.
#
# It installs Debian's chromium if it is missing, runs gofmt, go vet,
# staticcheck and `go test -race` with CI set (so the browser test fails
# instead of skipping without a browser), and keeps the test's screenshots
# in $AGENTRT_ARTIFACTS (default: examples/web/artifacts).
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v chromium >/dev/null 2>&1 && [[ -z "${CHROME:-}" ]]; then
	echo "ci.sh: installing Debian's chromium" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

test -z "$(gofmt -l .)" || { gofmt -l . >&2; echo "ci.sh: gofmt needed" >&2; exit 1; }
go vet ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

export AGENTRT_ARTIFACTS="${AGENTRT_ARTIFACTS:-$PWD/artifacts}"
CI=true go test -race -count=1 ./...
echo "ci.sh: screenshots in $AGENTRT_ARTIFACTS:" >&2
ls -l "$AGENTRT_ARTIFACTS"/*.png >&2
