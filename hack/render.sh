#!/usr/bin/env bash
# Renders every scenario under examples/render with crossplane render (crank)
# against a locally built pool-compose function, writes each output to
# _output/render/<scenario>.yaml and validates every object in it against
# the real schema of its kind (test/harness/schemacheck). Exits non-zero when the
# function does not build or serve, a scenario does not render, or any
# object is invalid.
#
# Usage: hack/render.sh [SCENARIO...]   (default: every scenario)
# FUNCTION_BIN=PATH runs that function binary instead of building
# functions/pool-compose (it must take --insecure and --address).
#
# A scenario is a folder with xr.yaml, composition.yaml and functions.yaml
# (crossplane render's three arguments), required.yaml (resources the
# function asks for), want-phase (the XR's status.phase the render must
# produce) and, optionally, observed.yaml (composed resources that already
# exist).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

out=_output/render
bin=_output/bin
mkdir -p "$out" "$bin"

# Kinds whose vendors publish no schema: rendered, but not validated.
no_schema=(NodeClass.eks.amazonaws.com NodePool.compute.coreweave.com)

fail() { echo "render: $*" >&2; exit 1; }

# phase FILE: status.phase of the XR, the first document of render output.
phase() {
	awk '/^---$/ { if (++doc > 1) exit; next }
		/^status:/ { st = 1; next }
		/^[^ ]/ { st = 0 }
		st && /^  phase: / { print $2; exit }' "$1"
}

crank=$(hack/tool.sh crank) || fail "cannot get crank (hack/tool.sh crank); see the messages above"

fn=${FUNCTION_BIN:-}
if [ -z "$fn" ]; then
	echo "render: building functions/pool-compose and schemacheck"
	fn=$bin/function-pool-compose
	go build -o "$fn" ./functions/pool-compose ||
		fail "functions/pool-compose does not build (see above): scenarios cannot render until it does"
fi
go build -o "$bin/schemacheck" ./test/cmd/schemacheck ||
	fail "test/cmd/schemacheck does not build (see above)"

# listening PORT: whether something accepts connections on 127.0.0.1:PORT.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A free loopback port: random in the ephemeral-free range, retried.
port=
for _ in $(seq 50); do
	p=$((20000 + RANDOM % 20000))
	if ! listening "$p"; then port=$p; break; fi
done
[ -n "$port" ] || fail "found no free port on 127.0.0.1"

fnlog=$out/function.log
"$fn" --insecure --debug --address "127.0.0.1:$port" --metrics-address "" >"$fnlog" 2>&1 &
fnpid=$!
stop() {
	if kill -0 "$fnpid" 2>/dev/null; then
		kill "$fnpid" 2>/dev/null || true
		wait "$fnpid" 2>/dev/null || true
	fi
}
trap stop EXIT

for _ in $(seq 300); do
	listening "$port" && break
	kill -0 "$fnpid" 2>/dev/null || fail "the function exited before serving; its log ($fnlog):
$(tail -n 20 "$fnlog")"
	sleep 0.1
done
listening "$port" || fail "the function did not listen on 127.0.0.1:$port within 30s; see $fnlog"
echo "render: function-pool-compose serving on 127.0.0.1:$port (pid $fnpid)"

xrd=()
[ -f apis/definition.yaml ] && xrd=(--xrd "$root/apis/definition.yaml")
extra_crds=()
[ -d examples/crds ] && extra_crds=(-crds examples/crds)
skips=(-skip CustomResourceDefinition.apiextensions.k8s.io)
for k in "${no_schema[@]}"; do skips+=(-skip "$k"); done

if [ $# -gt 0 ]; then
	scenarios=("$@")
else
	scenarios=()
	for d in examples/render/*/; do
		[ -f "$d/xr.yaml" ] && scenarios+=("$(basename "$d")")
	done
fi
[ ${#scenarios[@]} -gt 0 ] || fail "no scenarios under examples/render"
# A full run leaves only this run's output behind.
[ $# -gt 0 ] || rm -f "$out"/*.yaml "$out"/*.err "$out"/*.check

declare -A result
failed=0
for s in "${scenarios[@]}"; do
	dir=examples/render/$s
	[ -f "$dir/xr.yaml" ] || fail "no scenario $s (no $dir/xr.yaml)"
	args=("$dir/xr.yaml" "$dir/composition.yaml" "$dir/functions.yaml" -r -x
		-a "render.crossplane.io/runtime-development-target=127.0.0.1:$port" --timeout 60s "${xrd[@]}")
	[ -e "$dir/required.yaml" ] && args+=(-e "$dir/required.yaml")
	[ -e "$dir/observed.yaml" ] && args+=(-o "$dir/observed.yaml")

	if ! "$crank" render "${args[@]}" >"$out/$s.yaml" 2>"$out/$s.err"; then
		result[$s]="RENDER FAILED: $(tail -n 1 "$out/$s.err")"
		failed=1
		continue
	fi
	# Validate what was rendered, then the scenario's own inputs, so the
	# fixtures stay true to the real schemas too.
	inputs=("$dir/xr.yaml" "$dir/composition.yaml" "$dir/functions.yaml")
	[ -e "$dir/required.yaml" ] && inputs+=("$dir/required.yaml")
	[ -e "$dir/observed.yaml" ] && inputs+=("$dir/observed.yaml")
	check=(-q "${extra_crds[@]}" "${skips[@]}")
	if ! "$bin/schemacheck" "${check[@]}" "$out/$s.yaml" >"$out/$s.check" 2>&1; then
		result[$s]="INVALID OUTPUT: $(tail -n 1 "$out/$s.check" | sed 's/^schemacheck: //'); see $out/$s.check"
		failed=1
		continue
	fi
	if ! "$bin/schemacheck" "${check[@]}" "${inputs[@]}" >"$out/$s.inputs.check" 2>&1; then
		result[$s]="INVALID INPUTS: $(tail -n 1 "$out/$s.inputs.check" | sed 's/^schemacheck: //'); see $out/$s.inputs.check"
		failed=1
		continue
	fi
	got=$(phase "$out/$s.yaml")
	want=$(cat "$dir/want-phase" 2>/dev/null || echo "(no want-phase file)")
	if [ "$got" != "$want" ]; then
		result[$s]="WRONG PHASE: XR status.phase is ${got:-empty}, want $want; see $out/$s.yaml"
		failed=1
		continue
	fi
	composed=$(grep -c 'crossplane.io/composition-resource-name:' "$out/$s.yaml" || true)
	warnings=$(grep -c '^severity: SEVERITY_WARNING' "$out/$s.yaml" || true)
	result[$s]="ok: phase $got, $composed composed, $warnings warnings; schemas: $(tail -n 1 "$out/$s.check" | sed 's/^schemacheck: //')"
done

stop
trap - EXIT

echo
echo "render summary (output in $out/):"
for s in "${scenarios[@]}"; do
	printf '  %-16s %s\n' "$s" "${result[$s]}"
done
for s in "${scenarios[@]}"; do
	case ${result[$s]} in
	ok:*) ;;
	RENDER*) echo; echo "== $s: crank render said:"; tail -n 20 "$out/$s.err" ;;
	WRONG\ PHASE*) echo; echo "== $s: the XR's status says:"; grep -A3 '^  message:\|reason: .*Failed' "$out/$s.yaml" | head -n 12 ;;
	INVALID\ OUTPUT*) echo; echo "== $s:"; grep -v '^skip\|^ok' "$out/$s.check" | head -n 40 ;;
	INVALID\ INPUTS*) echo; echo "== $s (inputs):"; grep -v '^skip\|^ok' "$out/$s.inputs.check" | head -n 40 ;;
	esac
done
if [ "$failed" -ne 0 ]; then
	echo "render: FAILED" >&2
	exit 1
fi
echo "render: every scenario rendered and validated"
