#!/usr/bin/env bash
# Builds burstpool's Crossplane packages offline with `crank xpkg build`
# (crank v2.2.1, from hack/tool.sh) into ${OUTPUT:-_output}/packages:
#
#   burstpool.xpkg                          the Configuration: crossplane.yaml,
#                                           apis/definition.yaml (the XRD) and
#                                           apis/composition.yaml
#   function-pool-compose-<arch>.xpkg       the Function: package/function
#                                           (crossplane.yaml, input/*.yaml CRDs)
#                                           with the runtime image of
#                                           ./functions/pool-compose embedded
#   provider-burstpool-<arch>.xpkg          the Provider: package/provider
#                                           (crossplane.yaml, crds/*.yaml) with
#                                           the runtime image of ./cmd/provider
#   burstpool-aws.xpkg                      only when asked for (target aws):
#                                           the burstpool-aws Configuration,
#                                           package/aws/crossplane.yaml
#
# crank embeds exactly ONE runtime image per package (it loads
# --embed-runtime-image-tarball as a single-image tarball), so the Function
# and the Provider are built once per architecture, <arch> in amd64 and
# arm64. Push the files of one package together as one multi-platform index:
# `crank xpkg push -f a.xpkg,b.xpkg REF`, or ocireg.PushXpkgIndex in Go.
#
# Each package's metadata, XRD and Composition pass hack/validate.sh first.
# Runtime images are built by build/cmd/imagebuild, without a container engine:
# static binaries (CGO_ENABLED=0, -trimpath, -s -w) on an empty base, user
# 65532:65532, the program at /usr/local/bin/<package name> as entrypoint
# and the warmup helper ./cmd/warm at /warm (the provider's also the fail-safe
# ./cmd/failsafe at /failsafe), each linked with VERSION as its release
# (internal/version: logged at start, burstpool_build_info). They are
# written next to the packages in ${OUTPUT}/images/<name>-<arch>.tar.
# Timestamps come from SOURCE_DATE_EPOCH (default: the time of the last
# commit), so rebuilding the same tree gives byte-identical packages.
#
# With REGISTRY set (a release; hack/release.sh sets it), VERSION must be a
# semantic version vX.Y.Z and the packages are made for REGISTRY/NAME:VERSION:
# the Configurations' dependencies on burstpool's own packages name
# REGISTRY/NAME with the constraint ">=VERSION <vX.(Y+1).0", the
# Composition's pipeline names the Function as Crossplane names that
# dependency (REGISTRY=registry.example.com/platform gives
# platform-function-pool-compose), and the
# function's default warmup helper image (compiled in, and the default the
# input CRD shows) is REGISTRY/warm:VERSION. Without REGISTRY the files are
# packed as they are in the checkout.
#
# Usage: hack/package.sh [configuration] [function] [provider] [aws]
#   (default: configuration, function and provider)
# Environment: OUTPUT (default _output), PLATFORMS (default
# linux/amd64,linux/arm64), VERSION (image label; default git describe),
# REGISTRY (see above).
set -euo pipefail
shopt -s extglob

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUTPUT:-_output}
pkgs=$out/packages
images=$out/images
platforms=${PLATFORMS:-linux/amd64,linux/arm64}

die() { echo "package: $*" >&2; exit 1; }

# need FILE...: fail with a message naming each missing file.
need() {
	local f missing=0
	for f in "$@"; do
		[ -f "$f" ] || { echo "package: missing $f" >&2; missing=1; }
	done
	[ $missing = 0 ] || die "cannot build $what: the files above are missing"
}

# need_main DIR: fail unless DIR holds a Go main package.
need_main() {
	[ -d "$1" ] && grep -qs '^package main$' "$1"/*.go ||
		die "cannot build $what: $1 is not a Go main package (yet)"
}

# stage DIR FILE...: a fresh staging folder holding FILEs, so that crank
# packs nothing else.
stage() {
	local dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$@" "$dir/"
	[ -z "$registry" ] || release_refs "$dir"
}

# dependency_name REF: the name Crossplane gives the package it installs
# for a dependency on the repository REF (host/path, no tag): the
# repository's path as a DNS label (crossplane v2.4.0,
# internal/controller/pkg/resolver, with crossplane-runtime's
# xpkg.ToDNSLabel: lowercase letters and digits kept, '.', '/', ':' and '-'
# turned into '-' except first and last, cut at 63 characters, dashes at
# either end trimmed). ghcr.io/burstpool/function-pool-compose gives
# burstpool-function-pool-compose, registry.example.com/platform/... gives
# platform-....
dependency_name() {
	local ref=$1 repo c out= i
	case ${ref%%/*} in *.* | *:* | localhost) repo=${ref#*/} ;; *) repo=$ref ;; esac
	for ((i = 0; i < ${#repo}; i++)); do
		c=${repo:i:1}
		case $c in
		[a-z0-9]) out+=$c ;;
		. | / | : | -) ((i == 0 || i == 62 || i == ${#repo} - 1)) || out+=- ;;
		esac
		((i != 62)) || break
	done
	out=${out##+(-)}
	out=${out%%+(-)}
	echo "$out"
}

# release_refs DIR: in the YAML files of DIR, burstpool's own package
# references and versions become the release's (see the header): a
# dependency whose package starts with ghcr.io/burstpool/ is renamed under
# REGISTRY and gets the release's constraint; the Composition's pipeline
# names the Function by the name Crossplane gives that dependency (see
# dependency_name), so a release to any registry path composes; the warm
# image default becomes REGISTRY/warm:VERSION.
release_refs() {
	local f fn
	fn=$(dependency_name "$registry/function-pool-compose")
	for f in "$1"/*.yaml; do
		awk -v reg="$registry" -v constraint="$constraint" -v warm="$registry/warm:$version" -v fn="$fn" '
			/^ *(- )?package: ghcr\.io\/burstpool\// { sub(/ghcr\.io\/burstpool\//, reg "/"); own = 1; print; next }
			/^ *(- )?package:/ { own = 0 }
			own && /^ *version:/ { sub(/version:.*/, "version: \"" constraint "\""); own = 0 }
			/^ *functionRef:/ { ref = 1; print; next }
			ref && /^ *name: burstpool-function-pool-compose *$/ { sub(/burstpool-function-pool-compose/, fn) }
			ref && /^ *name:/ { ref = 0 }
			{ gsub(/ghcr\.io\/burstpool\/warm:v[0-9][^ "]*/, warm); print }
		' "$f" >"$f.tmp" && mv "$f.tmp" "$f"
	done
}

# check FILE...: hack/validate.sh, quiet unless a file breaks its schema.
check() {
	local log
	log=$(hack/validate.sh "$@" 2>&1) || { echo "$log" >&2; die "cannot build $what: $* do not validate"; }
}

# examples DIR FILE...: FILEs become the examples of the package staged in
# DIR (crank packs DIR/examples into the package's .up/examples.yaml).
examples() {
	local dir=$1/examples
	shift
	mkdir -p "$dir"
	cp "$@" "$dir/"
}

# build STAGE XPKG [RUNTIME_TARBALL]: crank xpkg build, with the examples
# in STAGE/examples.
build() {
	local args=(xpkg build --package-root "$1" --examples-root "$1/examples" --package-file "$2.tmp")
	[ $# -lt 3 ] || args+=(--embed-runtime-image-tarball "$3")
	"$crank" "${args[@]}" || die "crank xpkg build failed for $2"
	mv -f "$2.tmp" "$2"
	echo "package: $2 ($(du -h "$2" | cut -f1))" >&2
}

# runtime NAME MAIN: builds the runtime image tarballs of MAIN, one per
# platform, and prints their paths.
# The images pass no default arguments: the programs listen on the pod's
# interfaces by default, and a DeploymentRuntimeConfig's container args
# (--debug, say) replace an image's default arguments anyway.
runtime() {
	# Every binary says which release it is (internal/version).
	local ldflags="-X github.com/burstpool/burstpool/internal/version.Version=$version"
	local -a args=()
	case $1 in
	function-*) [ -z "$registry" ] || ldflags+=" -X main.defaultHelperImage=$registry/warm:$version" ;;
	# The provider's image also carries the fail-safe that
	# deploy/provider/failsafe.yaml runs beside it.
	provider-*) args=(-extra /failsafe=./cmd/failsafe) ;;
	esac
	"$imagebuild" -main "$2" -name "$1" -extra /warm=./cmd/warm -ldflags "$ldflags" "${args[@]}" \
		-platform "$platforms" -out "$images" -created "$created" \
		-label "org.opencontainers.image.title=$1" \
		-label "org.opencontainers.image.source=https://github.com/burstpool/burstpool" \
		-label "org.opencontainers.image.version=$version" \
		-label "org.opencontainers.image.revision=$revision" \
		-label "org.opencontainers.image.licenses=Apache-2.0"
}

# embedded NAME MAIN EXAMPLES FILE...: one package per platform, with the
# YAML files of the folder EXAMPLES as its examples.
embedded() {
	local name=$1 main=$2 ex=$3 tarballs tarball arch
	shift 3
	need_main "$main"
	need_main cmd/warm
	if [ -z "$imagebuild" ]; then
		go build -o "$out/bin/imagebuild" ./build/cmd/imagebuild || die "cannot build build/cmd/imagebuild"
		imagebuild=$out/bin/imagebuild
	fi
	local stagedir=$out/stage/$name
	stage "$stagedir" "$@"
	examples "$stagedir" "$ex"/*.yaml
	tarballs=$(runtime "$name" "$main") || die "cannot build the runtime image of $main"
	for tarball in $tarballs; do
		arch=${tarball##*/"$name"-}
		arch=${arch%.tar}
		build "$stagedir" "$pkgs/$name-$arch.xpkg" "$tarball"
	done
}

# runtime_package NAME MAIN DIR CRDS: the package of DIR/crossplane.yaml and
# the CRDs in DIR/CRDS, with the runtime image of MAIN embedded, one per
# platform, and DIR/examples as its examples.
runtime_package() {
	local name=$1 main=$2 meta=$3/crossplane.yaml crds
	need "$meta"
	shopt -s nullglob
	crds=("$3/$4"/*.yaml)
	shopt -u nullglob
	[ ${#crds[@]} -gt 0 ] || die "cannot build $what: no CRDs in $3/$4"
	check "$meta"
	embedded "$name" "$main" "$3/examples" "$meta" "${crds[@]}"
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(configuration function provider)
for t in "${targets[@]}"; do
	case $t in configuration | function | provider | aws) ;; *) die "unknown package $t (want configuration, function, provider or aws)" ;; esac
done

crank=$(hack/tool.sh crank) || die "cannot get crank: run hack/tool.sh crank (see /tmp/toolbuild.log if it is building)"
mkdir -p "$pkgs" "$images" "$out/bin"
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
fi
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
registry=${REGISTRY:-}
registry=${registry%/}
constraint=
if [ -n "$registry" ]; then
	[[ $version =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
		die "VERSION=$version is not a semantic version vX.Y.Z (REGISTRY is set: a release)"
	constraint=">=$version <v${BASH_REMATCH[1]}.$((BASH_REMATCH[2] + 1)).0"
fi
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
imagebuild=

for t in "${targets[@]}"; do
	start=$SECONDS
	case $t in
	configuration)
		what="the Configuration"
		need crossplane.yaml apis/definition.yaml apis/composition.yaml
		check crossplane.yaml apis/definition.yaml apis/composition.yaml
		stage "$out/stage/burstpool" crossplane.yaml apis/definition.yaml apis/composition.yaml
		examples "$out/stage/burstpool" examples/pools/reference/*.yaml examples/queryservices.yaml
		build "$out/stage/burstpool" "$pkgs/burstpool.xpkg"
		;;
	aws)
		what="the burstpool-aws Configuration"
		need package/aws/crossplane.yaml
		check package/aws/crossplane.yaml
		stage "$out/stage/burstpool-aws" package/aws/crossplane.yaml
		examples "$out/stage/burstpool-aws" package/aws/examples/*.yaml
		build "$out/stage/burstpool-aws" "$pkgs/burstpool-aws.xpkg"
		;;
	function)
		what="the Function"
		runtime_package function-pool-compose ./functions/pool-compose package/function input
		;;
	provider)
		what="the Provider"
		runtime_package provider-burstpool ./cmd/provider package/provider crds
		;;
	esac
	echo "package: built $what in $((SECONDS - start))s" >&2
done
