package decision

import (
	"testing"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/test/harness/pbstruct"
)

// TestVendorVerdict reads what the vendors' controllers say of composed
// objects, as they write it: Karpenter's NodePool (Ready, with
// ValidationSucceeded and NodeClassReady, which copies a NodeClass's Ready
// reason and message: sigs.k8s.io/karpenter@v1.14.1 pkg/controllers/
// nodepool/readiness/controller.go), a NodeClass's Ready, and Crossplane
// managed resources' Synced and Ready.
func TestVendorVerdict(t *testing.T) {
	obj := func(kind, name, conditions string) string {
		y := "apiVersion: example.io/v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n"
		if conditions != "" {
			y += "status:\n  conditions:\n" + conditions
		}
		return y
	}
	cond := func(typ, status, reason, message string) string {
		return "  - {type: " + typ + ", status: \"" + status + "\", reason: " + reason + ", message: \"" + message + "\"}\n"
	}
	cases := map[string]struct {
		reason   string
		observed map[string]string
		want     Condition
	}{
		"NothingObserved": {
			reason: "A new pool: nothing has reported yet.",
			want:   Condition{Type: CondComposedReady, Status: metav1.ConditionUnknown, Reason: "NotReportedYet", Message: "no composed object has reported whether it is ready yet"},
		},
		"AllReady": {
			reason: "Objects without conditions (a Deployment's own are not Ready) have no verdict; the rest are ready.",
			observed: map[string]string{
				"nodepool":    obj("NodePool", "burst-nodepool", cond("Ready", "True", "Ready", "")),
				"placeholder": obj("Deployment", "burst-placeholder", cond("Available", "True", "MinimumReplicasAvailable", "")),
			},
			want: Condition{Type: CondComposedReady, Status: metav1.ConditionTrue, Reason: "AllReady", Message: "the controllers of the 1 composed objects that report readiness report them ready"},
		},
		"NodeClassRefusedByAWS": {
			reason: "An Auto Mode NodeClass whose role may not tag: the NodeClass and the NodePool that waits for it, each with the vendor's words.",
			observed: map[string]string{
				"nodeclass": obj("NodeClass", "burst-nodeclass", cond("Ready", "False", "UnauthorizedOperation", "not authorized to perform ec2:CreateTags")),
				"nodepool": obj("NodePool", "burst-nodepool", cond("NodeClassReady", "False", "UnauthorizedOperation", "not authorized to perform ec2:CreateTags")+
					cond("Ready", "False", "UnhealthyDependents", "NodeClassReady=False")+cond("ValidationSucceeded", "True", "ValidationSucceeded", "")),
			},
			want: Condition{Type: CondComposedReady, Status: metav1.ConditionFalse, Reason: "NotReady", Message: "NodeClass burst-nodeclass: Ready=False: not authorized to perform ec2:CreateTags (UnauthorizedOperation); " +
				"NodePool burst-nodepool: NodeClassReady=False: not authorized to perform ec2:CreateTags (UnauthorizedOperation); Ready=False: NodeClassReady=False (UnhealthyDependents)"},
		},
		"NodeGroupNotSynced": {
			reason: "A managed resource the provider cannot sync: Synced=False with the cloud's error, and its Ready.",
			observed: map[string]string{
				"cloud-nodepool": obj("NodeGroup", "burst-nodegroup", cond("Synced", "False", "ReconcileError", "InvalidParameterException: AMI type does not match instance types")+cond("Ready", "False", "Creating", "")),
			},
			want: Condition{Type: CondComposedReady, Status: metav1.ConditionFalse, Reason: "NotReady", Message: "NodeGroup burst-nodegroup: Ready=False: Creating; Synced=False: InvalidParameterException: AMI type does not match instance types (ReconcileError)"},
		},
		"ReadyButNotSynced": {
			reason: "A managed resource Ready from before but no longer Synced is not ready either.",
			observed: map[string]string{
				"node-iam-role": obj("Role", "burst-node-role", cond("Ready", "True", "Available", "")+cond("Synced", "False", "ReconcileError", "AccessDenied")),
			},
			want: Condition{Type: CondComposedReady, Status: metav1.ConditionFalse, Reason: "NotReady", Message: "Role burst-node-role: Synced=False: AccessDenied (ReconcileError)"},
		},
		"SyncedNotReadyYet": {
			reason: "Synced without a Ready condition yet says so.",
			observed: map[string]string{
				"capacity": obj("PoolCapacity", "burst-capacity", cond("Synced", "True", "ReconcileSuccess", "")),
			},
			want: Condition{Type: CondComposedReady, Status: metav1.ConditionFalse, Reason: "NotReady", Message: "PoolCapacity burst-capacity: Ready not reported yet"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := map[resource.Name]*structpb.Struct{}
			for n, y := range tc.observed {
				obs[resource.Name(n)] = pbstruct.FromYAML(t, y)
			}
			if diff := cmp.Diff(tc.want, vendorVerdict(obs)); diff != "" {
				t.Errorf("%s\nvendorVerdict(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
