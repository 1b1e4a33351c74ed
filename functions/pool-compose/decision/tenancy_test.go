package decision

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

func TestTenantOf(t *testing.T) {
	cfg := &v1beta1.Input{Tenancy: &v1beta1.Tenancy{
		Limits: v1beta1.Limits{MaxExecutors: ptr.To[int32](100), InstanceFamilies: []string{"r7gd"}},
		Namespaces: []v1beta1.TenantNamespaces{
			{Names: []string{"team-[", "e6-*"}, AttachFrom: []string{"workspace-*"}, Limits: v1beta1.Limits{MaxNodes: ptr.To[int32](5)}},
			{Names: []string{"e6-pools"}, Limits: v1beta1.Limits{MaxExecutors: ptr.To[int32](7)}},
		},
	}}
	type want struct {
		Entry                                  int
		MaxExecutors, MaxNodes                 int32
		MaxExecutorsPath, MaxNodesPath, Family string
		Attach                                 map[string]bool
	}
	cases := map[string]struct {
		reason string
		cfg    *v1beta1.Input
		ns     string
		want   want
	}{
		"NoSettings": {
			reason: "Without tenancy settings the executor cap is 1000, nodes are not capped apart, and a pool attaches only its own namespace's QueryServices.",
			cfg:    &v1beta1.Input{}, ns: "e6-pools",
			want: want{Entry: -1, MaxExecutors: 1000, MaxExecutorsPath: "tenancy.maxExecutors", MaxNodesPath: "tenancy.maxNodes", Family: "tenancy.instanceFamilies",
				Attach: map[string]bool{"e6-pools": true, "workspace-a": false}},
		},
		"FirstMatchingEntry": {
			reason: "The first entry whose pattern matches applies (a malformed pattern matches nothing); its limits override the tenancy's field by field.",
			cfg:    cfg, ns: "e6-pools",
			want: want{Entry: 0, MaxExecutors: 100, MaxNodes: 5, MaxExecutorsPath: "tenancy.maxExecutors", MaxNodesPath: "tenancy.namespaces[0].maxNodes", Family: "tenancy.instanceFamilies",
				Attach: map[string]bool{"e6-pools": true, "workspace-a": true, "workspacex": false, "team-a": false}},
		},
		"NoEntry": {
			reason: "A namespace no entry names gets the tenancy's limits and its own namespace only.",
			cfg:    cfg, ns: "team-a",
			want: want{Entry: -1, MaxExecutors: 100, MaxExecutorsPath: "tenancy.maxExecutors", MaxNodesPath: "tenancy.maxNodes", Family: "tenancy.instanceFamilies",
				Attach: map[string]bool{"team-a": true, "workspace-a": false}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tn := TenantOf(tc.cfg, tc.ns)
			got := want{Entry: tn.Entry, MaxExecutors: tn.MaxExecutors, MaxNodes: tn.MaxNodes, MaxExecutorsPath: tn.MaxExecutorsPath, MaxNodesPath: tn.MaxNodesPath, Family: tn.FamiliesPath,
				Attach: map[string]bool{}}
			for ns := range tc.want.Attach {
				got.Attach[ns] = tn.MayAttachFrom(ns)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nTenantOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCheckClaim(t *testing.T) {
	entry := Tenant{Namespace: "e6-pools", Entry: 0, Grants: v1beta1.TenantNamespaces{
		Names: []string{"e6-pools"}, WorkloadClusters: []string{"west"}, ClusterIDs: []string{"42"}, Methods: []string{"static"}, Clouds: []string{"onprem"},
	}, MaxExecutors: 100, MaxExecutorsPath: "tenancy.maxExecutors", MaxNodes: 10, MaxNodesPath: "tenancy.namespaces[0].maxNodes",
		InstanceFamilies: []string{"r7gd", "m7g.2xlarge"}, FamiliesPath: "tenancy.instanceFamilies"}
	none := Tenant{Namespace: "team-b", Entry: -1, MaxExecutors: 1000, MaxExecutorsPath: "tenancy.maxExecutors"}
	choice := PlatformChoices{WorkloadCluster: "east", ClusterID: "7", Method: "karpenter", Cloud: "aws"}
	spec := func(mod func(*poolv1alpha1.PoolSpec)) poolv1alpha1.PoolSpec {
		s := poolv1alpha1.PoolSpec{MaxExecutors: 10, MinExecutors: 2, ExecutorsPerNode: 1}
		if mod != nil {
			mod(&s)
		}
		return s
	}
	cases := map[string]struct {
		reason string
		args   ClaimArgs
		want   []SettingError
	}{
		"NothingAsked": {
			reason: "A claim that asks for nothing the platform decides is allowed.",
			args:   ClaimArgs{Spec: spec(nil), Tenant: none, Choice: choice},
		},
		"SettingsOwnChoice": {
			reason: "A claim may repeat what the settings choose anyway, with no grant.",
			args: ClaimArgs{Spec: spec(func(s *poolv1alpha1.PoolSpec) {
				s.WorkloadCluster = &poolv1alpha1.WorkloadCluster{ProviderConfigName: "east"}
				s.Provisioning = &poolv1alpha1.Provisioning{ClusterID: "7", Method: "karpenter", Cloud: "aws"}
			}), Tenant: none, Choice: choice},
		},
		"Granted": {
			reason: "What the namespace's entry lists is allowed.",
			args: ClaimArgs{Spec: spec(func(s *poolv1alpha1.PoolSpec) {
				s.WorkloadCluster = &poolv1alpha1.WorkloadCluster{ProviderConfigName: "west"}
				s.Provisioning = &poolv1alpha1.Provisioning{ClusterID: "42", Method: "static", Cloud: "onprem"}
				s.InstanceConfig = &poolv1alpha1.InstanceConfig{InstanceType: "r7gd.4xlarge"}
			}), Tenant: entry, Choice: choice, Inherited: "m7g.2xlarge"},
		},
		"AdminProviderConfig": {
			reason: "A ProviderConfig the entry does not list is refused, naming the entry's field.",
			args: ClaimArgs{Spec: spec(func(s *poolv1alpha1.PoolSpec) {
				s.WorkloadCluster = &poolv1alpha1.WorkloadCluster{ProviderConfigName: "admin"}
			}), Tenant: entry, Choice: choice},
			want: []SettingError{{Path: "tenancy.namespaces[0].workloadClusters", Message: `does not list "admin", which the Pool's spec.workloadCluster.providerConfigName names: ask the platform team to add it, or remove it from the Pool`}},
		},
		"NoEntryForNamespace": {
			reason: "Without an entry for its namespace, a claim may choose nothing beyond the settings: each value names the namespaces list.",
			args: ClaimArgs{Spec: spec(func(s *poolv1alpha1.PoolSpec) {
				s.Provisioning = &poolv1alpha1.Provisioning{ClusterID: "999", Method: "lke", Cloud: "linode", ManageNodePool: true, ComposeNodeIAM: ptr.To(true)}
			}), Tenant: none, Choice: choice},
			want: []SettingError{
				{Path: "tenancy.namespaces", Message: `has no entry for namespace team-b, so its Pools may not set spec.provisioning.clusterId to "999": ask the platform team to add an entry that lists it in clusterIds, or remove it from the Pool`},
				{Path: "tenancy.namespaces", Message: `has no entry for namespace team-b, so its Pools may not set spec.provisioning.method to "lke": ask the platform team to add an entry that lists it in methods, or remove it from the Pool`},
				{Path: "tenancy.namespaces", Message: `has no entry for namespace team-b, so its Pools may not set spec.provisioning.cloud to "linode": ask the platform team to add an entry that lists it in clouds, or remove it from the Pool`},
				{Path: "tenancy.namespaces", Message: `has no entry for namespace team-b, so its Pools may not set spec.provisioning.manageNodePool: ask the platform team to add an entry with manageNodePool: true, or remove it from the Pool`},
				{Path: "tenancy.namespaces", Message: `has no entry for namespace team-b, so its Pools may not set spec.provisioning.composeNodeIAM: ask the platform team to add an entry with composeNodeIAM: true, or remove it from the Pool`},
			},
		},
		"FlagNotGranted": {
			reason: "An entry that does not turn manageNodePool on refuses a claim that does.",
			args: ClaimArgs{Spec: spec(func(s *poolv1alpha1.PoolSpec) {
				s.Provisioning = &poolv1alpha1.Provisioning{ManageNodePool: true}
			}), Tenant: entry, Choice: choice},
			want: []SettingError{{Path: "tenancy.namespaces[0].manageNodePool", Message: "is not true, so the Pool may not set spec.provisioning.manageNodePool: ask the platform team to set it, or remove it from the Pool"}},
		},
		"MaxInt32Executors": {
			reason: "maxExecutors 2147483647 is refused by the default cap, and its node count does not overflow.",
			args:   ClaimArgs{Spec: spec(func(s *poolv1alpha1.PoolSpec) { s.MaxExecutors = 2147483647 }), Tenant: none, Choice: choice},
			want:   []SettingError{{Path: "tenancy.maxExecutors", Message: "allows at most 1000 executors per Pool (the default when it is unset), and spec.maxExecutors is 2147483647: lower it, or ask the platform team to raise the limit"}},
		},
		"TooManyNodes": {
			reason: "maxExecutors within the cap still asks for too many nodes at one executor per node.",
			args:   ClaimArgs{Spec: spec(func(s *poolv1alpha1.PoolSpec) { s.MaxExecutors = 25; s.ExecutorsPerNode = 2 }), Tenant: entry, Choice: choice},
			want:   []SettingError{{Path: "tenancy.namespaces[0].maxNodes", Message: "allows at most 10 nodes per Pool, and spec.maxExecutors 25 at spec.executorsPerNode 2 asks for 13: lower maxExecutors or raise executorsPerNode"}},
		},
		"FamilyNotAllowed": {
			reason: "An instance type, family or inherited type outside the allowed families is refused.",
			args: ClaimArgs{Spec: spec(func(s *poolv1alpha1.PoolSpec) {
				s.InstanceConfig = &poolv1alpha1.InstanceConfig{InstanceFamily: "p5"}
			}), Tenant: entry, Choice: choice, Inherited: "m7g.16xlarge"},
			want: []SettingError{
				{Path: "tenancy.instanceFamilies", Message: `allows only r7gd, m7g.2xlarge, and spec.instanceConfig.instanceFamily is "p5": pick one of them`},
				{Path: "tenancy.instanceFamilies", Message: `allows only r7gd, m7g.2xlarge, and the instance type inherited through spec.inheritNodeConfigFrom is "m7g.16xlarge": pick one of them`},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The node figures come from the spec's Facts, as Compute hands them over.
			f := specFacts(tc.args.Spec)
			tc.args.PerNode, tc.args.MaxNodes = f.PerNode, f.MaxNodes
			got := CheckClaim(tc.args)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCheckClaim(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
