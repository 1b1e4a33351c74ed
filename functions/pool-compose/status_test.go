package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/test/reference"
)

// TestStatusHasTheReferenceShapes reads the status examples of the
// reference (5.3 allocations, 5.4 cached images, 5.5 attached
// QueryServices) strictly into the Pool's status type, encodes them as the
// function writes the XPool status, and checks that every field the
// reference shows comes out as the reference shows it.
func TestStatusHasTheReferenceShapes(t *testing.T) {
	text, found, folder := reference.SeedForTest(t)
	if !found {
		t.Skipf("cannot check against the reference: %s is not beside this checkout", folder)
	}
	for _, heading := range []string{"5.3 Allocations", "5.4 Cached Images Status", "5.5 Attached QueryServices"} {
		t.Run(heading, func(t *testing.T) {
			block, err := reference.Block(text, heading)
			if err != nil {
				t.Fatal(err)
			}
			block = statusYAML(block)
			var doc struct {
				Status poolv1alpha1.PoolStatus `json:"status"`
			}
			if err := yaml.UnmarshalStrict([]byte(block), &doc); err != nil {
				t.Fatalf("the reference's %s does not fit the Pool status type: %v", heading, err)
			}
			var want map[string]any
			if err := yaml.Unmarshal([]byte(block), &want); err != nil {
				t.Fatal(err)
			}
			got := statusValue(doc.Status, false, nil).GetStructValue().AsMap()
			for key, list := range want["status"].(map[string]any) {
				for i, item := range list.([]any) {
					gotItem := got[key].([]any)[i].(map[string]any)
					if diff := cmp.Diff(normalize(item), normalize(subset(gotItem, item.(map[string]any)))); diff != "" {
						t.Errorf("status.%s[%d] (-reference +burstpool):\n%s", key, i, diff)
					}
				}
			}
		})
	}
}

// statusYAML is the status: document at the start of block, without the
// prose that may follow it up to the next numbered heading.
func statusYAML(block string) string {
	lines := strings.Split(block, "\n")
	for i, l := range lines[1:] {
		if l != "" && !strings.HasPrefix(l, " ") {
			return strings.Join(lines[:i+1], "\n") + "\n"
		}
	}
	return block
}

// subset keeps the keys of got that want has.
func subset(got, want map[string]any) map[string]any {
	out := map[string]any{}
	for k := range want {
		if v, ok := got[k]; ok {
			out[k] = v
		}
	}
	return out
}

// normalize makes YAML and Struct values comparable: numbers as float64.
func normalize(v any) any {
	b, _ := yaml.Marshal(v)
	var out any
	_ = yaml.Unmarshal(b, &out)
	return out
}

// TestStatusWritesZerosAndFalse proves that counters of 0 and compatible
// false are written: `kubectl get pool` prints 0 for them, and the
// reference's jsonpath filter [?(@.compatible==false)] finds incompatible
// QueryServices; and that burstpool's extensions are written beside them.
func TestStatusWritesZerosAndFalse(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	st := poolv1alpha1.PoolStatus{
		Phase:        poolv1alpha1.PhasePending,
		Allocations:  []poolv1alpha1.Allocation{{QueryService: poolv1alpha1.QueryServiceReference{Name: "a", Namespace: "ns"}}},
		CachedImages: []poolv1alpha1.CachedImage{{Image: "img:1", WarmupStatus: poolv1alpha1.WarmupPending}},
		AttachedQueryServices: []poolv1alpha1.AttachedQueryService{
			{QueryService: poolv1alpha1.QueryServiceReference{Name: "huge-cluster", Namespace: "workspace-huge"}, LastChecked: &at},
		},
		ExecutorFailures:      []poolv1alpha1.ExecutorFailureCount{{Reason: "OOMKilled", Count: 2}},
		UnauthorizedExecutors: []poolv1alpha1.UnauthorizedExecutor{{Pod: "rogue-0", Namespace: "team-x"}},
	}
	want := map[string]any{
		"phase": "Pending", "totalExecutors": 0.0, "availableExecutors": 0.0, "occupiedExecutors": 0.0, "pendingExecutors": 0.0, "currentNodes": 0.0,
		"allocations":  []any{map[string]any{"queryService": map[string]any{"name": "a", "namespace": "ns"}, "poolExecutors": 0.0, "regularExecutors": 0.0}},
		"cachedImages": []any{map[string]any{"image": "img:1", "warmupStatus": "Pending", "nodesReady": 0.0, "nodesTotal": 0.0}},
		"attachedQueryServices": []any{map[string]any{
			"queryService": map[string]any{"name": "huge-cluster", "namespace": "workspace-huge"},
			"compatible":   false, "attached": false, "lastChecked": "2026-11-22T12:00:00Z",
		}},
		"executorFailures":      []any{map[string]any{"reason": "OOMKilled", "count": 2.0}},
		"unauthorizedExecutors": []any{map[string]any{"pod": "rogue-0", "namespace": "team-x"}},
	}
	if diff := cmp.Diff(want, statusValue(st, false, nil).GetStructValue().AsMap()); diff != "" {
		t.Errorf("statusValue (-want +got):\n%s", diff)
	}
}
