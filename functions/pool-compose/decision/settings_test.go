package decision

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

func TestRequiredSettings(t *testing.T) {
	withDefaults := func(c *v1beta1.Input) *v1beta1.Input { Default(c, helperImage); return c }
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
		envs: []NamedData{{Name: "burstpool", Data: map[string]any{
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
