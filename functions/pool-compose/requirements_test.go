package main

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// TestRequirements checks that the function asks Crossplane only for the
// QueryServices a pool can attach or must report.
func TestRequirements(t *testing.T) {
	named := func(ns, name string) *fnv1.ResourceSelector {
		return &fnv1.ResourceSelector{ApiVersion: "e6data.io/v1alpha1", Kind: "QueryService", Match: &fnv1.ResourceSelector_MatchName{MatchName: name}, Namespace: &ns}
	}
	labelled := func(l map[string]string) *fnv1.ResourceSelector {
		return &fnv1.ResourceSelector{ApiVersion: "e6data.io/v1alpha1", Kind: "QueryService", Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: l}}}
	}
	pointing := labelled(map[string]string{qsv1alpha1.LabelPool: "burst"})
	cases := map[string]struct {
		reason string
		spec   poolv1alpha1.PoolSpec
		pool   string
		want   map[string]*fnv1.ResourceSelector
	}{
		"AllowedByName": {
			reason: "Each allowed QueryService is fetched by name in its namespace (the pool's when unset), inheritNodeConfigFrom too, and once each.",
			spec: poolv1alpha1.PoolSpec{
				AllowedQueryServices:  []poolv1alpha1.QueryServiceReference{{Name: "a", Namespace: "team-a"}, {Name: "b"}},
				InheritNodeConfigFrom: &poolv1alpha1.QueryServiceReference{Name: "a", Namespace: "team-a"},
			},
			want: map[string]*fnv1.ResourceSelector{
				reqQSPrefix + "team-a/a": named("team-a", "a"), reqQSPrefix + "pools/b": named("pools", "b"), reqPointing: pointing,
			},
		},
		"SelectorByLabels": {
			reason: "A selector is fetched by its matchLabels and its In expressions of one value, across namespaces.",
			spec: poolv1alpha1.PoolSpec{QueryServiceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"tier": "gold"},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "burst", Operator: metav1.LabelSelectorOpIn, Values: []string{"on"}},
					{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
					{Key: "legacy", Operator: metav1.LabelSelectorOpDoesNotExist},
				},
			}},
			want: map[string]*fnv1.ResourceSelector{reqSelected: labelled(map[string]string{"tier": "gold", "burst": "on"}), reqPointing: pointing},
		},
		"SelectorOnPoolLabel": {
			reason: "A selector on e6data.io/pool={pool} already fetches the QueryServices labelled for the pool: asked once.",
			spec:   poolv1alpha1.PoolSpec{QueryServiceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{qsv1alpha1.LabelPool: "burst"}}},
			want:   map[string]*fnv1.ResourceSelector{reqSelected: pointing},
		},
		"PoolNameNotALabelValue": {
			reason: "A pool name no label can carry asks for no labelled QueryServices (Crossplane's list would fail).",
			pool:   "a-pool-name-longer-than-sixty-three-characters-which-no-label-value-can-hold",
			spec:   poolv1alpha1.PoolSpec{AllowedQueryServices: []poolv1alpha1.QueryServiceReference{{Name: "a", Namespace: "team-a"}}},
			want:   map[string]*fnv1.ResourceSelector{reqQSPrefix + "team-a/a": named("team-a", "a")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pool := tc.pool
			if pool == "" {
				pool = "burst"
			}
			got := Requirements(pool, "pools", tc.spec).GetResources()
			for n := range got {
				if !isQSRequirement(n) {
					delete(got, n)
				}
			}
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRequirements(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestNotAllowedReported checks, through the requests Crossplane builds,
// that a QueryService pointing at the pool without being allowed is
// reported when it carries the pool's label (as the end-to-end suite's
// rogue-cluster does), and that one without the label is not fetched.
func TestNotAllowedReported(t *testing.T) {
	labelled := qs("rogue-cluster", "team-c", "burst", "pools", "ghcr.io/e6data/executor:3.0", "1", "2Gi", map[string]string{qsv1alpha1.LabelPool: "burst"})
	unlabelled := qs("quiet-cluster", "team-c", "burst", "pools", "ghcr.io/e6data/executor:3.0", "1", "2Gi", nil)
	s := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: []string{qsAnalytics, qsReporting, labelled, unlabelled}, CRDs: kwokCRDs}
	got := map[string]any{}
	for _, q := range status(s.run(t))["attachedQueryServices"].([]any) {
		m := q.(map[string]any)
		ref := m["queryService"].(map[string]any)
		got[ref["namespace"].(string)+"/"+ref["name"].(string)] = m["attached"]
	}
	want := map[string]any{"team-a/analytics": true, "team-b/reporting": true, "team-c/rogue-cluster": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status.attachedQueryServices, name: attached: -want, +got:\n%s", diff)
	}
}

// TestOwnerRequirements checks that the cluster-scoped names a pool would
// compose are asked for by name whatever the spec and the cluster: the
// function tells a taken name from its own before it composes anything.
func TestOwnerRequirements(t *testing.T) {
	want := map[string]*fnv1.ResourceSelector{
		reqOwnerPrefix + string(objects.ComposedCapacity):                 {ApiVersion: "capacity.e6data.io/v1alpha1", Kind: "PoolCapacity", Match: &fnv1.ResourceSelector_MatchName{MatchName: "burst-capacity"}},
		reqOwnerPrefix + string(objects.ComposedPlaceholderPriorityClass): {ApiVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Match: &fnv1.ResourceSelector_MatchName{MatchName: "burst-placeholder"}},
		reqOwnerPrefix + string(objects.ComposedAgentPriorityClass):       {ApiVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Match: &fnv1.ResourceSelector_MatchName{MatchName: "burst-node-agent"}},
	}
	for _, spec := range []poolv1alpha1.PoolSpec{{}, {AllowedQueryServices: []poolv1alpha1.QueryServiceReference{{Name: "a"}}}} {
		got := Requirements("burst", "pools", spec).GetResources()
		for n := range got {
			if len(n) < len(reqOwnerPrefix) || n[:len(reqOwnerPrefix)] != reqOwnerPrefix {
				delete(got, n)
			}
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("Requirements(...) owned names: -want, +got:\n%s", diff)
		}
	}
}
