#!/usr/bin/env bash
# Validates Crossplane YAML offline with `crank beta validate` (crank v2.2.1)
# against the schemas of Crossplane v2.4.0: XRDs, Compositions, package
# metadata (meta.pkg.crossplane.io Configuration, Function, Provider),
# packages, and composite resources and claims of the XRDs given. Exits
# non-zero when any document breaks its schema, or has no known schema.
#
# Usage: hack/validate.sh [-e SCHEMAS]... [--allow-missing-schemas] FILE|DIR...
#   -e SCHEMAS               extra CRD/XRD files or folders to validate against
#                            (for example examples/crds); the XRDs and CRDs
#                            among FILEs are used as well, and so are
#                            burstpool's own CRDs: the function's input
#                            (package/function/input) and the provider's
#                            kinds (package/provider/crds), so that function
#                            inputs inside Compositions are checked too
#   --allow-missing-schemas  pass documents of kinds with no known schema
#
# crank always fetches the Crossplane image named by --crossplane-image (its
# default is xpkg.crossplane.io/crossplane/crossplane:<its own version>, empty
# in a crank built from source) and reads the schemas from its cache folder
# <cache-dir>/<image with ":" replaced by "@">/, skipping the download when
# that folder exists. This script fills that entry itself, so nothing is
# downloaded:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/burstpool/validate/
#     xpkg.crossplane.io/crossplane/crossplane@v2.4.0/package.yaml
# holds Crossplane's own CRDs and its package metadata schemas, the copies of
# the Go module github.com/crossplane/crossplane/v2@v2.4.0's cluster/crds and
# cluster/meta in test/crds/upstream/crossplane.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
CROSSPLANE=v2.4.0
image=xpkg.crossplane.io/crossplane/crossplane:$CROSSPLANE
cache=${XDG_CACHE_HOME:-$HOME/.cache}/burstpool/validate
entry=$cache/${image//:/@}

usage() { sed -n '/^# Usage:/,/^#   --allow/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

schemas=()
for d in "$root/package/function/input" "$root/package/provider/crds"; do
	[ -d "$d" ] && schemas+=("$d")
done
strict=--error-on-missing-schemas
files=()
while [ $# -gt 0 ]; do
	case $1 in
	-e) [ $# -ge 2 ] || usage; schemas+=("$2"); shift 2 ;;
	--allow-missing-schemas) strict=; shift ;;
	-h | --help) usage ;;
	-*) echo "validate: unknown option $1" >&2; usage ;;
	*) files+=("$1"); shift ;;
	esac
done
[ ${#files[@]} -gt 0 ] || usage

# yamls PATH...: the YAML files named, and those below the folders named.
yamls() {
	local p
	for p in "$@"; do
		if [ -d "$p" ]; then
			find "$p" -type f \( -name '*.yaml' -o -name '*.yml' \) | LC_ALL=C sort
		elif [ -f "$p" ]; then
			echo "$p"
		else
			echo "validate: $p: no such file or folder" >&2
			return 1
		fi
	done
}
for p in "${files[@]}" "${schemas[@]+"${schemas[@]}"}"; do
	[ -e "$p" ] || { echo "validate: $p: no such file or folder" >&2; exit 1; }
done
mapfile -t resources < <(yamls "${files[@]}")
mapfile -t schemafiles < <(yamls "${schemas[@]+"${schemas[@]}"}" "${files[@]}")
[ ${#resources[@]} -gt 0 ] || { echo "validate: no YAML files in ${files[*]}" >&2; exit 2; }

crank=$("$root/hack/tool.sh" crank)
# Crossplane's schemas, copied into the repository from the module (see its
# README), so validation needs nothing beside the checkout.
dir=$root/test/crds/upstream/crossplane
if [ ! -d "$dir" ] || [ ! -d "$dir/meta" ]; then
	echo "validate: $dir and $dir/meta must hold the CRDs of github.com/crossplane/crossplane/v2@$CROSSPLANE (cluster/crds, cluster/meta)" >&2
	exit 1
fi

# The cache entry, rewritten each run (it is cheap) so that it always matches
# the module; the rename keeps concurrent runs from reading half a file.
mkdir -p "$entry"
tmp=$(mktemp "$entry/.package.yaml.XXXXXX")
for f in "$dir"/*.yaml "$dir"/meta/*.yaml; do
	echo "---"
	cat "$f"
done >"$tmp"
mv -f "$tmp" "$entry/package.yaml"

# Only XRDs and CRDs are passed to crank as extensions: it would try to
# download the packages that other extensions (package metadata's dependsOn,
# pkg.crossplane.io Providers and Functions) name.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk '
	function flush() { if (keep && doc != "") printf "---\n%s", doc; doc = ""; keep = 0 }
	FNR == 1 { flush() }
	/^---/ { flush(); next }
	{ doc = doc $0 "\n" }
	/^kind:[[:space:]]*(CompositeResourceDefinition|CustomResourceDefinition)[[:space:]]*$/ { keep = 1 }
	END { flush() }
' "${schemafiles[@]}" >"$work/extensions.yaml"

# crank reads a document that holds only comments (a file's header before
# its first "---") as an object with no kind, which has no schema: pass each
# file on with such documents left out. CRDs are left out too: they are
# schemas (extensions above), and crank has none for CRDs themselves.
mkdir "$work/resources"
n=0
for f in "${resources[@]}"; do
	n=$((n + 1))
	out=$work/resources/$(printf %03d "$n")-$(basename "$f")
	awk '
		function flush() { if (body && !crd) printf "---\n%s", doc; doc = ""; body = 0; crd = 0 }
		/^---/ { flush(); next }
		{ doc = doc $0 "\n" }
		!/^[[:space:]]*(#.*)?$/ { body = 1 }
		/^kind:[[:space:]]*CustomResourceDefinition[[:space:]]*$/ { crd = 1 }
		END { flush() }
	' "$f" >"$out"
done

"$crank" beta validate --cache-dir "$cache" --crossplane-image "$image" $strict \
	"$work/extensions.yaml" "$work/resources"
