package decision

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
)

func TestNodeIAMOnAndApplies(t *testing.T) {
	on := &v1beta1.NodeIAM{Enabled: true}
	cases := map[string]struct {
		setting *v1beta1.NodeIAM
		pool    *poolv1alpha1.Provisioning
		det     Detection
		kwok    sizing.Cloud
		want    bool
	}{
		"SettingOn":         {setting: on, det: Detection{Cloud: cloudAWS, Method: methodKarpenter}, want: true},
		"SettingOff":        {det: Detection{Cloud: cloudAWS, Method: methodKarpenter}},
		"PoolOff":           {setting: on, pool: &poolv1alpha1.Provisioning{ComposeNodeIAM: ptr.To(false)}, det: Detection{Cloud: cloudAWS, Method: methodKarpenter}},
		"PoolOn":            {pool: &poolv1alpha1.Provisioning{ComposeNodeIAM: ptr.To(true)}, det: Detection{Cloud: cloudAWS, Method: methodKarpenter}, want: true},
		"EKSAutoMode":       {setting: on, det: Detection{Cloud: cloudAWS, Method: methodEKSAutoMode}},
		"SimulatedAWS":      {setting: on, det: Detection{Cloud: cloudKWOK, Method: methodKarpenter}, kwok: sizing.CloudAWS, want: true},
		"KWOKOwnCatalog":    {setting: on, det: Detection{Cloud: cloudKWOK, Method: methodKarpenter}},
		"GCPWithPoolSwitch": {pool: &poolv1alpha1.Provisioning{ComposeNodeIAM: ptr.To(true)}, det: Detection{Cloud: cloudGCP, Method: methodKarpenter}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NodeIAMOn(tc.setting, tc.pool) && NodeIAMApplies(tc.det, tc.kwok); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGateNodeIAM(t *testing.T) {
	cases := map[string]struct {
		st   NodeIAMState
		want NodeIAMDecision
	}{
		"Ready": {st: NodeIAMState{Role: "r"}, want: NodeIAMDecision{ComposeNodes: true, Role: "r", Usages: true,
			Condition: Condition{Type: CondNodeIAM, Status: metav1.ConditionTrue, Reason: "Ready", Message: "node IAM role r, its policy attachments and its EKS access entry are Ready"}}},
		"NewPoolWaits": {st: NodeIAMState{Role: "r", Waiting: []string{"Role x is not created yet"}}, want: NodeIAMDecision{
			Condition: Condition{Type: CondNodeIAM, Status: metav1.ConditionFalse, Reason: "Waiting", Message: "node IAM role r is not usable yet: Role x is not created yet"}}},
		"ExistingKeepsOldRoleAndUsages": {st: NodeIAMState{Role: "r", Waiting: []string{"w"}, NodePoolExists: true, NodeClassRole: "old", UsagesExist: true}, want: NodeIAMDecision{
			ComposeNodes: true, Role: "old", Usages: true,
			Condition: Condition{Type: CondNodeIAM, Status: metav1.ConditionFalse, Reason: "Waiting", Message: "node IAM role r is not usable yet: w"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, gateNodeIAM(tc.st)); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

func TestValidateNodeIAM(t *testing.T) {
	got := ValidateNodeIAM(&v1beta1.NodeIAM{
		PolicyARNs:          []string{"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy", "arn:aws-cn:iam::123456789012:policy/path/to/P", "arn:aws:s3:::bucket"},
		ExtraPolicyARNs:     []string{"arn:aws:iam::12345:policy/Short"},
		PermissionsBoundary: "Boundary",
	})
	var paths []string
	for _, e := range got {
		paths = append(paths, e.Path)
	}
	want := []string{"aws.nodeIAM.policyARNs[2]", "aws.nodeIAM.extraPolicyARNs[0]", "aws.nodeIAM.permissionsBoundary"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
}
