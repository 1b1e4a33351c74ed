#!/usr/bin/env bash
# Releases burstpool: builds every package for linux/amd64 and linux/arm64
# with hack/package.sh, made for REGISTRY and VERSION (the Configurations'
# dependencies and the function's default warmup helper image name the
# same release), and pushes
#
#   REGISTRY/burstpool:VERSION              the Configuration
#   REGISTRY/burstpool-aws:VERSION          the burstpool-aws Configuration
#   REGISTRY/function-pool-compose:VERSION  the Function, one index of both
#                                           platforms
#   REGISTRY/provider-burstpool:VERSION     the Provider, likewise
#   REGISTRY/warm:VERSION                   the warmup helper image (/warm),
#                                           likewise
#
# Pushes use the credentials of `crossplane xpkg login` or docker's
# configuration; registries on loopback addresses are spoken to over HTTP.
#
# Usage: make release VERSION=v0.1.0 REGISTRY=ghcr.io/burstpool
#        (or VERSION=... REGISTRY=... hack/release.sh)
# Environment: OUTPUT (default _output; the release is built in
# OUTPUT/release/VERSION), PLATFORMS (default linux/amd64,linux/arm64).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

die() { echo "release: $*" >&2; exit 1; }

[ -n "${VERSION:-}" ] || die "set VERSION, a semantic version such as v0.1.0"
[ -n "${REGISTRY:-}" ] || die "set REGISTRY, where the packages go, such as ghcr.io/burstpool"
registry=${REGISTRY%/}
export VERSION REGISTRY=$registry
export PLATFORMS=${PLATFORMS:-linux/amd64,linux/arm64}
export OUTPUT=${OUTPUT:-_output}/release/$VERSION
pkgs=$OUTPUT/packages

# hack/package.sh checks VERSION and renders the release's references.
hack/package.sh configuration aws function provider

crank=$(hack/tool.sh crank) || die "cannot get crank: run hack/tool.sh crank"

# files NAME: the per-platform package files of NAME, comma-separated.
files() {
	local p f list=
	for p in ${PLATFORMS//,/ }; do
		f=$pkgs/$1-${p#*/}.xpkg
		[ -f "$f" ] || die "missing $f"
		list+=${list:+,}$f
	done
	echo "$list"
}

push() {
	"$crank" xpkg push -f "$2" "$registry/$1:$VERSION" || die "cannot push $registry/$1:$VERSION"
	echo "release: pushed $registry/$1:$VERSION" >&2
}

push burstpool "$pkgs/burstpool.xpkg"
push burstpool-aws "$pkgs/burstpool-aws.xpkg"
push function-pool-compose "$(files function-pool-compose)"
push provider-burstpool "$(files provider-burstpool)"

# The warmup helper image: the static warm binary at /warm, as the warmup
# DaemonSets run it (internal/warmup HelperPath).
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH
go run ./build/cmd/imagebuild -main ./cmd/warm -name warm -path /warm -arg pause \
	-platform "$PLATFORMS" -out "$OUTPUT/images" \
	-label "org.opencontainers.image.title=warm" \
	-label "org.opencontainers.image.source=https://github.com/burstpool/burstpool" \
	-label "org.opencontainers.image.version=$VERSION" \
	-label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
	-label "org.opencontainers.image.licenses=Apache-2.0" \
	-push "$registry/warm:$VERSION" >/dev/null || die "cannot build or push $registry/warm:$VERSION"
echo "release: pushed $registry/warm:$VERSION" >&2
echo "release: $VERSION released to $registry" >&2
