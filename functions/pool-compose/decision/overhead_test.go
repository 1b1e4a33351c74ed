package decision

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// TestVMMemoryOverheadSetting hands sizing.vmMemoryOverheadPercent to the
// allocatable model of real clouds, where a platform's Karpenter chart
// may set another vmMemoryOverheadPercent than its provider's default (the
// GCP provider's chart sets 0.065: cloudpilot-ai/karpenter-provider-gcp
// charts/karpenter/values.yaml); unset, the provider's default applies;
// on kwok, whose simulated nodes offer what the default predicts, never;
// and a value that is not a share is refused, naming the field.
func TestVMMemoryOverheadSetting(t *testing.T) {
	type want struct {
		Overhead *float64
		Errors   []SettingError
	}
	cases := map[string]struct {
		reason  string
		setting string
		cloud   string
		want    want
	}{
		"Unset":           {reason: "Unset, the cloud's provider default (no override).", cloud: cloudGCP},
		"GCPChartValue":   {reason: "0.065 on GCP reaches the model.", setting: "0.065", cloud: cloudGCP, want: want{Overhead: ptr.To(0.065)}},
		"NoneOnAWS":       {reason: "0 is a share too.", setting: "0", cloud: cloudAWS, want: want{Overhead: ptr.To(0.0)}},
		"SimulatedClouds": {reason: "kwok keeps the default its instance types were rendered with.", setting: "0.065", cloud: cloudKWOK},
		"Percent": {reason: "6.5 is a percentage, not a share: refused.", setting: "6.5", cloud: cloudGCP,
			want: want{Errors: []SettingError{{Path: "sizing.vmMemoryOverheadPercent", Message: `"6.5" is not a decimal from 0 to below 1 such as 0.065 (6.5%)`}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := &v1beta1.Input{Sizing: &v1beta1.Sizing{VMMemoryOverheadPercent: tc.setting}}
			Default(cfg, helperImage)
			si, _ := sizeInput(Input{Config: cfg, Pool: "burst", Namespace: "pools"}, Facts{Detection: Detection{Cloud: tc.cloud, Method: methodKarpenter}}, 0)
			got := want{Overhead: si.Overhead.VMMemoryOverheadPercent, Errors: ValidateInput(cfg)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
