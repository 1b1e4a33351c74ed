package decision

import (
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/test/harness/pbstruct"
)

// TestObserveCapacityReadsProviderStatus writes a status the way the
// capacity provider does, from its Go type, and reads it back as the
// function does: every field the Pool status uses survives.
// helperImage is the image of the node agents the settings default to.
const helperImage = "ghcr.io/burstpool/warm:v0.1.0"

func TestObserveCapacityReadsProviderStatus(t *testing.T) {
	at := metav1.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	want := capv1alpha1.PoolCapacityObservation{
		TotalExecutors: 8, AvailableExecutors: 3, OccupiedExecutors: 5, PendingExecutors: 1,
		Nodes:          capv1alpha1.NodeCounts{Ready: 4, NotReady: 1},
		Allocations:    []capv1alpha1.Allocation{{QueryService: "qs", Namespace: "ns", PoolExecutors: 5, RegularExecutors: 2, AllocatedAt: &at}},
		WarmupFailures: []capv1alpha1.WarmupFailure{{Image: "img:1", Reason: "ErrImagePull", Message: "not found", Nodes: 2}},
		ObservedAt:     at,
	}
	ap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&want)
	if err != nil {
		t.Fatal(err)
	}
	s, err := structpb.NewStruct(map[string]any{"status": map[string]any{"atProvider": ap}})
	if err != nil {
		t.Fatal(err)
	}
	got := observeCapacity(s)
	if got == nil {
		t.Fatal("observeCapacity() = nil: the provider's status does not decode")
	}
	if diff := cmp.Diff(want, got.PoolCapacityObservation); diff != "" {
		t.Errorf("observeCapacity() (-provider +function):\n%s", diff)
	}
}

// TestPoolStatusShowsFailuresAndUnauthorized checks that what tenants see
// on their Pool counts the capacity's failures by reason and names the
// unauthorized executors.
func TestPoolStatusShowsFailuresAndUnauthorized(t *testing.T) {
	o := &CapacityObservation{capv1alpha1.PoolCapacityObservation{
		Failures: []capv1alpha1.Failure{
			{Pod: "a", Reason: capv1alpha1.FailureOOMKilled}, {Pod: "b", Reason: capv1alpha1.FailureDisrupted}, {Pod: "c", Reason: capv1alpha1.FailureOOMKilled},
		},
		UnauthorizedExecutors: []capv1alpha1.UnauthorizedExecutor{{Pod: "r", Namespace: "team-x", QueryService: "rogue"}},
	}}
	type view struct {
		Failures     []poolv1alpha1.ExecutorFailureCount
		Unauthorized []poolv1alpha1.UnauthorizedExecutor
	}
	want := view{
		Failures:     []poolv1alpha1.ExecutorFailureCount{{Reason: "OOMKilled", Count: 2}, {Reason: "Disrupted", Count: 1}},
		Unauthorized: []poolv1alpha1.UnauthorizedExecutor{{Pod: "r", Namespace: "team-x", QueryService: "rogue"}},
	}
	if diff := cmp.Diff(want, view{o.executorFailures(), o.unauthorizedExecutors()}); diff != "" {
		t.Errorf("Pool status from the capacity (-want +got):\n%s", diff)
	}
}

// TestDecideCapacity: the PoolCapacity counts the pool's nodes and
// executors up to maxExecutors, with the policies and shares of the pool;
// while nothing picks the pool's nodes it is kept as it is.
func TestDecideCapacity(t *testing.T) {
	sel := map[string]string{"e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools"}
	input := func(mod func(*Input)) Input {
		cfg := &v1beta1.Input{}
		Default(cfg, helperImage)
		in := Input{Pool: "burst", Namespace: "pools", Config: cfg, Spec: poolv1alpha1.PoolSpec{MaxExecutors: 21, ExecutorsPerNode: 4}}
		if mod != nil {
			mod(&in)
		}
		return in
	}
	attachedQS := func(names ...string) []Attachment {
		var out []Attachment
		for _, n := range names {
			out = append(out, Attachment{QS: &QueryService{Name: n, Namespace: "team-a"}, Name: n, Namespace: "team-a", Attached: true})
		}
		return out
	}
	facts := Facts{PerNode: 4, Scheduling: objects.Scheduling{NodeSelector: sel}, Attached: attachedQS("analytics", "reporting")}
	type want struct {
		// ForProvider are the fields of spec.forProvider the case is about.
		MaxExecutors, ExecutorsPerNode int64
		Unauthorized                   string
		Shares                         map[string]int64
		Waiting                        []string
		Preserve                       []resource.Name
	}
	cases := map[string]struct {
		reason string
		in     Input
		facts  Facts
		want   want
	}{
		"MaxExecutors": {
			reason: "maxExecutors and executorsPerNode go to the PoolCapacity, which the pool waits for until it is Ready.",
			in:     input(nil), facts: facts,
			want: want{MaxExecutors: 21, ExecutorsPerNode: 4, Unauthorized: string(capv1alpha1.UnauthorizedReport), Waiting: []string{"PoolCapacity burst-capacity"}},
		},
		"DenyIsReported": {
			reason: "With Deny (the default), admission keeps unauthorized executors out; the PoolCapacity reports any that ran before.",
			in:     input(func(in *Input) { in.Spec.UnauthorizedExecutors = objects.PolicyDeny }), facts: facts,
			want: want{MaxExecutors: 21, ExecutorsPerNode: 4, Unauthorized: string(capv1alpha1.UnauthorizedReport), Waiting: []string{"PoolCapacity burst-capacity"}},
		},
		"Evict": {
			reason: "Evict is the PoolCapacity's to do.",
			in:     input(func(in *Input) { in.Spec.UnauthorizedExecutors = string(capv1alpha1.UnauthorizedEvict) }), facts: facts,
			want: want{MaxExecutors: 21, ExecutorsPerNode: 4, Unauthorized: string(capv1alpha1.UnauthorizedEvict), Waiting: []string{"PoolCapacity burst-capacity"}},
		},
		"Shares": {
			reason: "Every attached QueryService gets the default share, team-a/reporting its override.",
			in: input(func(in *Input) {
				in.Spec.UnauthorizedExecutors = string(capv1alpha1.UnauthorizedReport)
				in.Spec.QueryServiceLimits = &poolv1alpha1.QueryServiceLimits{MaxPoolExecutors: 8, Overrides: []poolv1alpha1.QueryServiceLimit{{Name: "reporting", Namespace: "team-a", MaxPoolExecutors: 2}}}
			}),
			facts: facts,
			want:  want{MaxExecutors: 21, ExecutorsPerNode: 4, Unauthorized: string(capv1alpha1.UnauthorizedReport), Shares: map[string]int64{"analytics": 8, "reporting": 2}, Waiting: []string{"PoolCapacity burst-capacity"}},
		},
		"Ready": {
			reason: "An observed PoolCapacity that is Ready holds nothing up.",
			in: input(func(in *Input) {
				in.Observed = map[resource.Name]*structpb.Struct{objects.ComposedCapacity: pbstruct.FromYAML(t, "status: {conditions: [{type: Ready, status: 'True'}]}")}
			}),
			facts: facts,
			want:  want{MaxExecutors: 21, ExecutorsPerNode: 4, Unauthorized: string(capv1alpha1.UnauthorizedReport)},
		},
		"NoNodeSelector": {
			reason: "Nothing picks the pool's nodes yet: the PoolCapacity is kept as it is.",
			in:     input(nil), facts: Facts{PerNode: 4},
			want: want{Preserve: []resource.Name{objects.ComposedCapacity}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := decideCapacity(tc.in, tc.facts, nil, nil, nil)
			got := want{Waiting: o.Waiting, Preserve: o.Preserve}
			if l, ok := o.Lazy[objects.ComposedCapacity]; ok {
				fp, _, _ := unstructured.NestedMap(l.Build().Object, "spec", "forProvider")
				got.MaxExecutors, _, _ = unstructured.NestedInt64(fp, "maxExecutors")
				got.ExecutorsPerNode, _, _ = unstructured.NestedInt64(fp, "executorsPerNode")
				got.Unauthorized, _, _ = unstructured.NestedString(fp, "policies", "unauthorizedExecutors")
				qss, _, _ := unstructured.NestedSlice(fp, "queryServices")
				for _, q := range qss {
					q := q.(map[string]any)
					if n, ok := q["maxPoolExecutors"].(int64); ok {
						if got.Shares == nil {
							got.Shares = map[string]int64{}
						}
						got.Shares[q["name"].(string)] = n
					}
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\ndecideCapacity (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
