package main

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// TestEnvironmentConfigWins checks that the EnvironmentConfig's values win
// over the Composition's input, field by field, and reach the NodeClass.
func TestEnvironmentConfigWins(t *testing.T) {
	s := scenario{
		Input: "apiVersion: pool.fn.burstpool.io/v1beta1\nkind: Input\nclusterName: from-input\naws: {role: input-role, amiAlias: bottlerocket@latest}\n" + attachAnywhere,
		XR:    xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs,
		Environment: []string{environmentConfig("burstpool", "  clusterName: prod-east\n  aws: {role: KarpenterNodeRole-prod-east}\n")},
	}
	nc := desired(s.run(t), "nodeclass")
	if nc == nil {
		t.Fatal("no NodeClass composed")
	}
	spec := nc.Object["spec"].(map[string]any)
	got := map[string]any{"role": spec["role"], "subnets": spec["subnetSelectorTerms"], "ami": spec["amiSelectorTerms"]}
	want := map[string]any{
		"role":    "KarpenterNodeRole-prod-east",
		"subnets": []any{map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "prod-east"}}},
		"ami":     []any{map[string]any{"alias": "bottlerocket@latest"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EC2NodeClass: -want, +got:\n%s", diff)
	}
}

func TestEnvironmentSelector(t *testing.T) {
	cases := map[string]struct {
		in   *v1beta1.Input
		want *fnv1.ResourceSelector
	}{
		"DefaultName": {
			in:   &v1beta1.Input{},
			want: &fnv1.ResourceSelector{ApiVersion: environmentAPIVersion, Kind: environmentKind, Match: &fnv1.ResourceSelector_MatchName{MatchName: "burstpool"}},
		},
		"Named": {
			in:   &v1beta1.Input{EnvironmentConfig: &v1beta1.EnvironmentConfigSelector{Name: "east"}},
			want: &fnv1.ResourceSelector{ApiVersion: environmentAPIVersion, Kind: environmentKind, Match: &fnv1.ResourceSelector_MatchName{MatchName: "east"}},
		},
		"ByLabel": {
			in: &v1beta1.Input{EnvironmentConfig: &v1beta1.EnvironmentConfigSelector{MatchLabels: map[string]string{"burstpool.io/settings": "true"}}},
			want: &fnv1.ResourceSelector{ApiVersion: environmentAPIVersion, Kind: environmentKind,
				Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"burstpool.io/settings": "true"}}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, environmentSelector(tc.in), protocmp.Transform()); diff != "" {
				t.Errorf("environmentSelector(): -want, +got:\n%s", diff)
			}
		})
	}
}

// TestLabelledEnvironmentConfigsMerge checks that EnvironmentConfigs
// selected by label merge in name order, and that a problem names the one
// that set the field.
func TestLabelledEnvironmentConfigsMerge(t *testing.T) {
	s := scenario{
		Input: "apiVersion: pool.fn.burstpool.io/v1beta1\nkind: Input\nenvironmentConfig: {matchLabels: {burstpool.io/settings: \"true\"}}\n",
		XR:    xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs,
		Environment: []string{
			environmentConfig("b-team", "  karpenter: {weight: 300}\n"),
			environmentConfig("a-base", "  clusterName: prod\n  aws: {role: r}\n  karpenter: {weight: 20}\n"),
		},
	}
	rsp := s.run(t)
	want := "EnvironmentConfig b-team field data.karpenter.weight 300 is not between 1 and 100"
	if got, _ := status(rsp)["message"].(string); got != want {
		t.Errorf("status.message: got %q, want %q", got, want)
	}
}
