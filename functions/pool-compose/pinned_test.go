package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/reference"
)

// TestPinnedTypeIsExact applies the reference's own 4.4 manifest (its
// drift-checked copy in examples/pools/reference; section 4.4, "Multi-Executor Per Node Pool": an
// explicit instanceType r6gd.8xlarge with spotEnabled), on EKS with
// Karpenter. The reference's 3.2 calls instanceConfig.instanceType the
// explicit instance type, so the NodePool offers exactly that type; only
// where the platform's settings allow stand-ins (karpenter.
// pinnedTypeStandIns) does a type of its shape (r7gd.8xlarge: 32 vCPU,
// 256Gi, local NVMe) join it. One type on spot is one spot market, and the
// Pool says so, naming the setting.
func TestPinnedTypeIsExact(t *testing.T) {
	// The byte-for-byte copy of 4.4, which reference.TestCopiesMatchReference
	// keeps from drifting: it is in every checkout, so nothing is skipped.
	m := reference.Manifests[3]
	if m.Section != "4.4" {
		t.Fatalf("reference.Manifests[3] is %s, want 4.4", m.Section)
	}
	manifest, err := m.Read(gomod.RootForTest(t))
	if err != nil {
		t.Fatal(err)
	}
	var claim map[string]any
	if err := yaml.Unmarshal(manifest, &claim); err != nil {
		t.Fatalf("the reference's 4.4 is not YAML: %v", err)
	}
	xr, name, ns := claimToXR(t, claim)
	type want struct {
		Types   []string
		Spot    string
		Warning []string
	}
	cases := map[string]struct {
		reason   string
		settings string
		want     want
	}{
		"ExactlyThePinnedType": {
			reason: "By default the NodePool offers r6gd.8xlarge alone, and the Pool warns that its spot nodes have one market, naming the setting.",
			want: want{Types: []string{"r6gd.8xlarge"}, Spot: "FALSE/OneSpotMarket",
				Warning: []string{"spot nodes of r6gd.8xlarge only, one spot market", "EnvironmentConfig burstpool field data.karpenter.pinnedTypeStandIns is off"}},
		},
		"StandInsWhereTheSettingsAllowThem": {
			reason:   "With karpenter.pinnedTypeStandIns, r7gd.8xlarge (same 32 vCPU / 256Gi, local NVMe) stands in on spot and the Pool does not warn.",
			settings: "  karpenter: {pinnedTypeStandIns: true}\n",
			want:     want{Types: []string{"r6gd.8xlarge", "r7gd.8xlarge"}, Spot: "TRUE/SeveralTypes"},
		},
	}
	for name2, tc := range cases {
		t.Run(name2, func(t *testing.T) {
			rsp := scenario{Input: shippedInput(t), Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, clusterSettings+tc.settings+referenceTenancy)},
				XR: xr, QueryServices: exampleQueryServices(t, name, ns), CRDs: awsCRDs, Catalog: true}.run(t)
			np := desired(rsp, "nodepool")
			if np == nil {
				t.Fatalf("%s\nno NodePool: %v", tc.reason, results(rsp))
			}
			types, _ := nodePoolTypes(np)
			got := want{Types: types, Spot: conditions(rsp)[decision.CondSpotDiversified]}
			msg := conditionMessage(rsp, decision.CondSpotDiversified)
			for _, w := range tc.want.Warning {
				if strings.Contains(msg, w) {
					got.Warning = append(got.Warning, w)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\n(condition message: %q)", tc.reason, diff, msg)
			}
		})
	}
}
