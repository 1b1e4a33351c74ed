#!/usr/bin/env bash
# Validates the node IAM objects burstpool composes on AWS (provider-aws
# v1.23.0 Role, RolePolicyAttachment and AccessEntry, and Crossplane's
# ClusterUsage) with `crank beta validate`, offline: renders the
# examples/render scenarios that compose them (hack/render.sh), picks those
# objects out of the output, and validates them against the provider's CRDs
# copied in test/crds/upstream and Crossplane's own (hack/validate.sh). Also
# validates the burstpool-aws Configuration's metadata (package/aws).
#
# Usage: hack/validate-node-iam.sh [--rendered]
#   --rendered  use the scenarios' output hack/render.sh has just written
#               (make test renders every scenario first) instead of
#               rendering them again
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scenarios=(aws-node-iam aws-node-iam-ready)
crds=(test/crds/upstream/iam.aws.upbound.io_roles.yaml
	test/crds/upstream/iam.aws.upbound.io_rolepolicyattachments.yaml
	test/crds/upstream/eks.aws.upbound.io_accessentries.yaml)

if [ "${1:-}" != --rendered ]; then
	hack/render.sh "${scenarios[@]}"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for s in "${scenarios[@]}"; do
	[ -f "_output/render/$s.yaml" ] || { echo "validate-node-iam: _output/render/$s.yaml is missing: run hack/render.sh $s first, or drop --rendered" >&2; exit 1; }
	awk '
		function flush() { if (keep) printf "---\n%s", doc; doc = ""; keep = 0 }
		/^---/ { flush(); next }
		{ doc = doc $0 "\n" }
		/^kind:[[:space:]]*(Role|RolePolicyAttachment|AccessEntry|ClusterUsage)[[:space:]]*$/ { keep = 1 }
		END { flush() }
	' "_output/render/$s.yaml" >"$work/$s.yaml"
	n=$(grep -c '^kind:' "$work/$s.yaml" || true)
	[ "$n" -gt 0 ] || { echo "validate-node-iam: $s composed no node IAM objects" >&2; exit 1; }
	echo "validate-node-iam: $s: $n node IAM objects and usages"
done

extra=()
for c in "${crds[@]}"; do extra+=(-e "$c"); done
hack/validate.sh "${extra[@]}" "$work" package/aws/crossplane.yaml
