package objects

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// TestNodeIAMObjects checks the references between the node IAM objects,
// the role's trust, boundary and tags, and the usages' targets.
func TestNodeIAMObjects(t *testing.T) {
	objs := NodeIAMObjects(NodeIAMArgs{Pool: "burst", Namespace: "pools", ClusterName: "prod", Region: "eu-west-1", Role: NodeRoleName("prod", "pools", "burst"), Settings: v1beta1.NodeIAM{
		PolicyARNs:          []string{"arn:aws:iam::123456789012:policy/team/Nodes"},
		ExtraPolicyARNs:     []string{"arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess", "arn:aws:iam::123456789012:policy/team/Nodes"},
		PermissionsBoundary: "arn:aws:iam::123456789012:policy/Boundary",
		Tags:                map[string]string{"team": "data"},
		ProviderConfigName:  "aws-prod",
	}})
	type ref struct{ Kind, Name, Field string }
	var got []ref
	for _, o := range objs {
		fp := o.Object.Object["spec"].(map[string]any)["forProvider"].(map[string]any)
		for _, f := range []string{"roleRef", "principalArnFromRoleRef"} {
			if r, ok := fp[f].(map[string]any); ok {
				got = append(got, ref{o.Object.GetKind(), r["name"].(string), f})
			}
		}
		if p := o.Object.Object["spec"].(map[string]any)["providerConfigRef"]; !cmp.Equal(p, map[string]any{"name": "aws-prod"}) {
			t.Errorf("%s: providerConfigRef %v", o.Name, p)
		}
	}
	want := []ref{
		{KindAttachment, "pools.burst-node-role", "roleRef"},
		{KindAttachment, "pools.burst-node-role", "roleRef"},
		{KindAccessEntry, "pools.burst-node-role", "principalArnFromRoleRef"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("references: -want, +got:\n%s", diff)
	}
	role := objs[0].Object
	if n := role.GetAnnotations()[AnnotationExternalName]; n != "prod.pools.burst-node" {
		t.Errorf("role name %q", n)
	}
	fp := role.Object["spec"].(map[string]any)["forProvider"].(map[string]any)
	if !strings.Contains(fp["assumeRolePolicy"].(string), `"Service":"ec2.amazonaws.com"`) || fp["permissionsBoundary"] != "arn:aws:iam::123456789012:policy/Boundary" ||
		!cmp.Equal(fp["tags"], map[string]any{"team": "data", "e6data.io/pool": "burst"}) {
		t.Errorf("role forProvider: %v", fp)
	}
	entry := objs[len(objs)-1].Object.Object["spec"].(map[string]any)["forProvider"].(map[string]any)
	if entry["type"] != "EC2_LINUX" || entry["clusterName"] != "prod" || entry["region"] != "eu-west-1" {
		t.Errorf("access entry forProvider: %v", entry)
	}
	for _, u := range NodeIAMUsages("burst", "pools", "burst-nodepool", objs, nil) {
		spec := u.Object.Object["spec"].(map[string]any)
		of := spec["of"].(map[string]any)["resourceRef"].(map[string]any)["name"]
		by := spec["by"].(map[string]any)["resourceRef"].(map[string]any)["name"]
		if by != "burst-nodepool" || spec["replayDeletion"] != true || !slices.ContainsFunc(objs, func(o NamedObject) bool { return o.Object.GetName() == of }) {
			t.Errorf("usage %s: %v", u.Name, spec)
		}
	}
}

func TestNodeRoleName(t *testing.T) {
	type args struct{ cluster, ns, pool string }
	cases := map[string]struct {
		reason string
		a, b   args
		want   string
	}{
		"Short": {
			reason: "A short name is the cluster, namespace and pool, joined by dots.",
			a:      args{"prod", "pools", "burst"}, b: args{"prod", "pools", "burst2"},
			want: "prod.pools.burst-node",
		},
		"DashesDoNotCollide": {
			reason: "team-a/burst and team/a-burst get two roles: no namespace holds a dot.",
			a:      args{"prod", "team-a", "burst"}, b: args{"prod", "team", "a-burst"},
			want: "prod.team-a.burst-node",
		},
		"NamespacesDoNotCollide": {
			reason: "Pools of one name in two namespaces get two roles.",
			a:      args{"prod", "team-a", "burst"}, b: args{"prod", "team-b", "burst"},
			want: "prod.team-a.burst-node",
		},
		"Long": {
			reason: "A name longer than IAM's 64 characters is cut and hashed, and stays distinct.",
			a:      args{"a-very-long-production-cluster-name-for-analytics", "team-a", "shared-burst-pool-of-team-x"},
			b:      args{"a-very-long-production-cluster-name-for-analytics", "team-a", "shared-burst-pool-of-team-x2"},
			want:   "a-very-long-production-cluster-name-for-analyti-b6b22622ccce05ab",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := NodeRoleName(tc.a.cluster, tc.a.ns, tc.a.pool)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nNodeRoleName (-want +got):\n%s", tc.reason, diff)
			}
			if len(got) > MaxRoleName {
				t.Errorf("%s\n%q is %d characters, more than IAM's %d", tc.reason, got, len(got), MaxRoleName)
			}
			if other := NodeRoleName(tc.b.cluster, tc.b.ns, tc.b.pool); other == got {
				t.Errorf("%s\n%v and %v share the role %q", tc.reason, tc.a, tc.b, got)
			}
		})
	}
}
