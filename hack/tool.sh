#!/usr/bin/env bash
# Prints the path of a pinned binary, building it from the Go module proxy
# (function-go-templating: from its git repository) first when the cache
# lacks it. Binaries are cached by version under
# ${XDG_CACHE_HOME:-$HOME/.cache}/burstpool/bin, so a warm machine builds
# nothing. Usage: hack/tool.sh NAME   (NAME: see the case below; "all" builds
# every one and prints nothing).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${BURSTPOOL_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/burstpool/bin}
mkdir -p "$cache"

K8S=v1.36.3
ETCD=v3.6.16
CROSSPLANE=v2.4.0
CRANK=v2.2.1
KWOK=v0.7.0
KARPENTER=v1.14.1
CONTROLLER_GEN=v0.20.1
GOLANGCI_LINT=v2.15.0
PROVIDER_KUBERNETES=v1.2.1
# function-go-templating is not on the module proxy: it is built from its
# repository's tag, checked against the tag's commit.
FUNCTION_GO_TEMPLATING=v0.12.2
FUNCTION_GO_TEMPLATING_COMMIT=0a1e6d386f4363fae257ddbfb5b497416370e830

k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36"

# build DIR PKG OUT [LDFLAGS]: builds PKG inside the tools module DIR.
build() {
	local dir=$1 pkg=$2 out=$3 ldflags=${4:--s -w}
	local start=$SECONDS
	# One build per binary at a time: a second caller waits, then finds it.
	exec 9>"$out.lock"
	flock 9
	if [ -x "$out" ]; then exec 9>&-; return 0; fi
	echo "building $(basename "$out") (first time only; cached in $cache)" >&2
	(cd "$root/tools/$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out.tmp" "$pkg")
	mv "$out.tmp" "$out"
	exec 9>&-
	echo "built $(basename "$out") in $((SECONDS - start))s" >&2
}

# build_git REPO TAG COMMIT OUT: builds the main package at the root of the
# git repository REPO (a URL or a local clone) at TAG, with the module's own
# go.mod and go.sum (its dependencies come from the module proxy); fails
# unless TAG is COMMIT. Each step is checked: the caller runs it after ||,
# where set -e does not hold.
build_git() {
	local repo=$1 tag=$2 commit=$3 out=$4
	local start=$SECONDS
	exec 9>"$out.lock"
	flock 9
	if [ -x "$out" ]; then exec 9>&-; return 0; fi
	echo "building $(basename "$out") from $repo (first time only; cached in $cache)" >&2
	if ! (
		set -e
		src=$(mktemp -d)
		trap 'rm -rf "$src"' EXIT
		git -C "$src" init -q
		if ! git -C "$src" fetch -q --depth 1 "$repo" "refs/tags/$tag"; then
			echo "cannot fetch tag $tag of $repo" >&2
			exit 1
		fi
		if [ "$(git -C "$src" rev-parse 'FETCH_HEAD^{commit}')" != "$commit" ]; then
			echo "tag $tag of $repo is not commit $commit" >&2
			exit 1
		fi
		git -C "$src" -c advice.detachedHead=false checkout -q FETCH_HEAD
		cd "$src"
		CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out.tmp" .
	); then
		exec 9>&-
		return 1
	fi
	mv "$out.tmp" "$out"
	exec 9>&-
	echo "built $(basename "$out") in $((SECONDS - start))s" >&2
}

path() {
	case $1 in
	kube-apiserver | kube-scheduler | kube-controller-manager | kubectl)
		out="$cache/$1-$K8S"
		[ -x "$out" ] || build kube "k8s.io/kubernetes/cmd/$1" "$out" "$k8s_ldflags" ;;
	etcd)
		out="$cache/etcd-$ETCD"
		[ -x "$out" ] || build etcd go.etcd.io/etcd/server/v3 "$out" ;;
	crossplane)
		# The version is stamped in so that package revisions can check
		# their Crossplane version constraints; the suffix is the recipe's
		# revision.
		out="$cache/crossplane-$CROSSPLANE-r2"
		[ -x "$out" ] || build crossplane github.com/crossplane/crossplane/v2/cmd/crossplane "$out" "-s -w -X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$CROSSPLANE" ;;
	crank)
		out="$cache/crank-$CRANK"
		[ -x "$out" ] || build crank github.com/crossplane/crossplane/v2/cmd/crank "$out" ;;
	kwok)
		out="$cache/kwok-$KWOK"
		[ -x "$out" ] || build kwok sigs.k8s.io/kwok/cmd/kwok "$out" ;;
	karpenter-kwok)
		out="$cache/karpenter-kwok-$KARPENTER"
		[ -x "$out" ] || build karpenter sigs.k8s.io/karpenter/kwok "$out" ;;
	provider-kubernetes)
		out="$cache/provider-kubernetes-$PROVIDER_KUBERNETES"
		[ -x "$out" ] || build provider-kubernetes github.com/crossplane-contrib/provider-kubernetes/cmd/provider "$out" ;;
	function-go-templating)
		# The peer composition function that make bench-grpc measures
		# pool-compose against; not among "all", as it is built from git.
		out="$cache/function-go-templating-$FUNCTION_GO_TEMPLATING"
		if [ ! -x "$out" ] && ! build_git "${FUNCTION_GO_TEMPLATING_GIT:-https://github.com/crossplane-contrib/function-go-templating.git}" "$FUNCTION_GO_TEMPLATING" "$FUNCTION_GO_TEMPLATING_COMMIT" "$out"; then
			echo "cannot build function-go-templating $FUNCTION_GO_TEMPLATING: set FUNCTION_GO_TEMPLATING_GIT to a clone of github.com/crossplane-contrib/function-go-templating that has the tag" >&2
			return 1
		fi ;;
	controller-gen)
		out="$cache/controller-gen-$CONTROLLER_GEN"
		[ -x "$out" ] || build controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen "$out" ;;
	golangci-lint)
		out="$cache/golangci-lint-$GOLANGCI_LINT"
		[ -x "$out" ] || build golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint "$out" ;;
	envtest)
		# A folder with kube-apiserver and etcd, for KUBEBUILDER_ASSETS.
		out="$cache/envtest-$K8S-$ETCD"
		if [ ! -x "$out/kube-apiserver" ] || [ ! -x "$out/etcd" ]; then
			mkdir -p "$out"
			ln -sf "$(path kube-apiserver)" "$out/kube-apiserver"
			ln -sf "$(path etcd)" "$out/etcd"
		fi ;;
	*)
		echo "unknown tool $1" >&2
		return 2 ;;
	esac
	echo "$out"
}

if [ "${1:-}" = all ]; then
	for t in etcd kube-apiserver crank kube-scheduler kube-controller-manager kubectl kwok karpenter-kwok crossplane controller-gen provider-kubernetes; do
		path "$t" >/dev/null
	done
	exit 0
fi
path "$1"
