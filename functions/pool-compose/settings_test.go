package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

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

func TestRequiredSettings(t *testing.T) {
	withDefaults := func(c *v1beta1.Input) *v1beta1.Input { Default(c, defaultHelperImage); return c }
	cases := map[string]struct {
		det       Detection
		manage    bool
		clusterID string
		in        *v1beta1.Input
		want      []string
	}{
		"AWSNeedsRoleAndClusterName": {
			det: Detection{Cloud: cloudAWS, Method: methodKarpenter}, in: withDefaults(&v1beta1.Input{}),
			want: []string{"aws.role", "clusterName"},
		},
		"AWSInstanceProfileAndSelectorsSuffice": {
			det: Detection{Cloud: cloudAWS, Method: methodKarpenter},
			in: withDefaults(&v1beta1.Input{AWS: &v1beta1.AWS{InstanceProfile: "p",
				NodeNetwork: v1beta1.NodeNetwork{SubnetSelectorTerms: []v1beta1.SelectorTerm{{ID: "s"}}, SecurityGroupSelectorTerms: []v1beta1.SelectorTerm{{ID: "g"}}}}}),
		},
		"EKSAutoModeNeedsItsRole": {
			det: Detection{Cloud: cloudAWS, Method: methodEKSAutoMode}, in: withDefaults(&v1beta1.Input{ClusterName: "c", AWS: &v1beta1.AWS{Role: "not-this-one"}}),
			want: []string{"eksAutoMode.role"},
		},
		"ManagedLKENeedsClusterID": {
			det: Detection{Cloud: cloudLinode, Method: methodLKE}, manage: true, in: withDefaults(&v1beta1.Input{}),
			want: []string{"provisioning.clusterId"},
		},
		"ManagedLKEWithThePoolsClusterID": {
			det: Detection{Cloud: cloudLinode, Method: methodLKE}, manage: true, clusterID: "42", in: withDefaults(&v1beta1.Input{}),
		},
		"KWOKNeedsNothing": {
			det: Detection{Cloud: cloudKWOK, Method: methodKarpenter}, in: withDefaults(&v1beta1.Input{}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range RequiredSettings(tc.det, tc.manage, tc.clusterID, tc.in) {
				got = append(got, e.Path)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RequiredSettings(): -want, +got:\n%s", diff)
			}
		})
	}
}

// TestWhereListEntries: a setting inside a list entry is fixed where the
// entry is set, even when the field itself is not.
func TestWhereListEntries(t *testing.T) {
	s := Settings{
		target: "burstpool",
		envs: []namedData{{name: "burstpool", data: map[string]any{
			"tenancy": map[string]any{"namespaces": []any{map[string]any{"names": []any{"a"}}}},
		}}},
		input: map[string]any{"tenancy": map[string]any{"namespaces": []any{map[string]any{}, map[string]any{"names": []any{"b"}}}}},
	}
	cases := map[string]struct {
		reason string
		path   string
		want   string
	}{
		"FieldOfAnEntry": {
			reason: "The entry the EnvironmentConfig sets holds the missing field.",
			path:   "tenancy.namespaces[0].workloadClusters",
			want:   "EnvironmentConfig burstpool field data.tenancy.namespaces[0].workloadClusters",
		},
		"EntryBeyondTheList": {
			reason: "The EnvironmentConfig's list (which replaces the input's whole) has no second entry; the input's does.",
			path:   "tenancy.namespaces[1].methods",
			want:   "the Composition's function input field tenancy.namespaces[1].methods",
		},
		"NotAnEntry": {
			reason: "A path into no list falls back to the EnvironmentConfig to edit.",
			path:   "tenancy.maxExecutors",
			want:   "EnvironmentConfig burstpool field data.tenancy.maxExecutors",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := s.where(tc.path); got != tc.want {
				t.Errorf("%s\nwhere(%q) = %q, want %q", tc.reason, tc.path, got, tc.want)
			}
		})
	}
}
