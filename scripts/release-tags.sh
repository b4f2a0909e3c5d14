#!/usr/bin/env bash
# release-tags.sh VERSION: the git tags of one release of every published
# module of the repository (all go.mod files but examples and internal/,
# which are never imported): "VERSION" for the root module, "DIR/VERSION"
# for the one in DIR, as the go command expects of nested modules.
#
# A nested module requires the root (and provider/... or mcptool, for some)
# at a placeholder version with a replace to the checkout; the replace is
# ignored by the module's users, so before tagging, each require of a module
# of this repository must name VERSION. The script lists the requires that
# do not, with the go mod edit command that fixes them, and prints the tag
# commands only when there are none. It changes nothing itself.
#
#   bash scripts/release-tags.sh v0.4.0
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: release-tags.sh VERSION (e.g. v0.4.0)}
root=github.com/agentrt/agentrt

mods=$(find . -name go.mod -not -path '*/node_modules/*' -not -path './examples/*' -not -path './internal/*' -exec dirname {} \; | sed 's#^\./##' | sort)
stale=0
for m in $mods; do
	[ "$m" = . ] && continue
	while read -r path ver; do
		if [ "$ver" != "$version" ]; then
			echo "$m requires $path $ver: (cd $m && go mod edit -require=$path@$version)"
			stale=1
		fi
	done < <(GOWORK=off go -C "$m" list -m -f '{{.Path}} {{.Version}}' all | awk -v r="$root" '$1 == r || index($1, r "/") == 1' | grep -v "^$root/$m ")
done
if [ "$stale" = 1 ]; then
	echo "release-tags.sh: fix the requires above (go mod edit resolves nothing; the replaces keep the checkout building), commit, run this again, and tag that commit"
	exit 1
fi
for m in $mods; do
	if [ "$m" = . ]; then echo "git tag $version"; else echo "git tag $m/$version"; fi
done
