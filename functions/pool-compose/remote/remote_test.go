package remote

import (
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

func TestRemoteView(t *testing.T) {
	mk := func(m map[string]any) *structpb.Struct {
		s, err := structpb.NewStruct(m)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	manifest := map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "burst-nodepool"}}
	obs := map[resource.Name]*structpb.Struct{
		"capacity":         mk(map[string]any{"apiVersion": objects.CapacityAPIVersion, "kind": objects.CapacityKind, "metadata": map[string]any{"name": "burst-capacity"}}),
		"remote-capacity":  mk(map[string]any{"apiVersion": objects.CapacityAPIVersion, "kind": objects.CapacityKind, "metadata": map[string]any{"name": "west-pools-burst-capacity"}}),
		"nodepool":         mk(map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool"}),
		"cloud-nodepool":   mk(map[string]any{"apiVersion": "lke.linode.upbound.io/v1alpha1", "kind": "NodePool"}),
		"remote-nodepool":  mk(map[string]any{"apiVersion": ObjectAPIVersion, "kind": ObjectKind, "status": map[string]any{"atProvider": map[string]any{"manifest": manifest}}}),
		"remote-nodeclass": mk(map[string]any{"apiVersion": ObjectAPIVersion, "kind": ObjectKind}),
	}
	got := map[string]string{}
	for n, o := range View(obs) {
		got[string(n)] = observed.String(o, "apiVersion") + " " + observed.String(o, "kind") + " " + observed.String(o, "metadata", "name")
	}
	want := map[string]string{
		"capacity":       objects.CapacityAPIVersion + " " + objects.CapacityKind + " west-pools-burst-capacity",
		"cloud-nodepool": "lke.linode.upbound.io/v1alpha1 NodePool ",
		"nodepool":       "karpenter.sh/v1 NodePool burst-nodepool",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("View (-want +got):\n%s", diff)
	}
}

func TestObjectName(t *testing.T) {
	nodePool := objects.New("karpenter.sh/v1", "NodePool", "burst-nodepool", "", nil)
	cases := map[string]struct {
		reason string
		pc, ns string
		u      *unstructured.Unstructured
		// other is an object of another pool (or kind) whose name must
		// differ.
		otherPC, otherNS string
		other            *unstructured.Unstructured
		want             string
	}{
		"PolicyAndBinding": {
			reason: "An admission policy and its binding share a name, not an Object.",
			pc:     "west", ns: "pools", u: objects.New("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "burstpool-pools-burst", "", nil),
			otherPC: "west", otherNS: "pools", other: objects.New("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "burstpool-pools-burst", "", nil),
			want: "west-pools-validatingadmissionpolicy-burstpool-pools-burst-04e2a27c8344b53b",
		},
		"PoolNamespaces": {
			reason: "Two pools of one name in two namespaces compose NodePools of one name, in two Objects.",
			pc:     "west", ns: "team-a", u: nodePool,
			otherPC: "west", otherNS: "team-b", other: nodePool,
			want: "west-team-a-nodepool-burst-nodepool-d34cb73c8cd7ef73",
		},
		"Dashes": {
			reason: "A DaemonSet burst-warmup of namespace team-a and a-burst-warmup of team are two Objects.",
			pc:     "east", ns: "team-a", u: objects.New("apps/v1", "DaemonSet", "burst-warmup", "team-a", nil),
			otherPC: "east", otherNS: "team", other: objects.New("apps/v1", "DaemonSet", "a-burst-warmup", "team", nil),
			want: "east-team-a-daemonset-team-a-burst-warmup-1aa72c766ad819c9",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ObjectName(tc.pc, tc.ns, tc.u)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nObjectName (-want +got):\n%s", tc.reason, diff)
			}
			if other := ObjectName(tc.otherPC, tc.otherNS, tc.other); other == got {
				t.Errorf("%s\nboth are %q", tc.reason, got)
			}
		})
	}
}

func TestUsedByObject(t *testing.T) {
	usage := func(apiVersion, kind, name string) *unstructured.Unstructured {
		u := objects.New(objects.UsageAPIVersion, objects.KindUsage, "p-node-iam-role", "", nil)
		u.Object["spec"] = map[string]any{
			"of": map[string]any{"apiVersion": "iam.aws.upbound.io/v1beta1", "kind": "Role", "resourceRef": map[string]any{"name": "p-node-role"}},
			"by": map[string]any{"apiVersion": apiVersion, "kind": kind, "resourceRef": map[string]any{"name": name}},
		}
		return u
	}
	cases := map[string]struct {
		in   *unstructured.Unstructured
		want *unstructured.Unstructured
	}{
		"a usage by the remote NodePool is a usage by its Object": {
			in:   usage("karpenter.sh/v1", "NodePool", "p-nodepool"),
			want: usage(ObjectAPIVersion, ObjectKind, "west-pools-nodepool-p-nodepool"),
		},
		"a usage by a management-cluster object stays": {
			in:   usage("iam.aws.upbound.io/v1beta1", "Role", "r"),
			want: usage("iam.aws.upbound.io/v1beta1", "Role", "r"),
		},
		"other kinds stay": {
			in:   objects.New("karpenter.sh/v1", "NodePool", "p-nodepool", "", nil),
			want: objects.New("karpenter.sh/v1", "NodePool", "p-nodepool", "", nil),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			name := func(u *unstructured.Unstructured) string {
				return "west-pools-" + strings.ToLower(u.GetKind()) + "-" + u.GetName()
			}
			if diff := cmp.Diff(tc.want, usedByObject(tc.in, name)); diff != "" {
				t.Errorf("usedByObject (-want +got):\n%s", diff)
			}
		})
	}
}
