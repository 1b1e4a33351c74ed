package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// writtenStatus is a status the function wrote, as withStatus takes it.
func writtenStatus(t *testing.T, st map[string]any) string {
	t.Helper()
	b, err := yaml.Marshal(map[string]any{"status": st})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(string(b), "status:\n")
}

// attachedTo lists the QueryServices a response's PoolCapacity attaches.
func attachedTo(t *testing.T, c *unstructured.Unstructured) []string {
	t.Helper()
	qss, _, _ := unstructured.NestedSlice(c.Object, "spec", "forProvider", "queryServices")
	out := []string{}
	for _, q := range qss {
		m := q.(map[string]any)
		out = append(out, fmt.Sprint(m["namespace"], "/", m["name"]))
	}
	return out
}

// TestTruncatedSummaryKeepsAttachments replays the attack of labelled
// strangers on a remote pool: the capacity provider's summary lists at
// most 1,000 QueryServices, and 1,001 QueryServices labelled
// e6data.io/pool=burst (anyone's to create) pushed the pool's own out of
// it. A truncated summary keeps every QueryService the pool attached
// before, and the pool says the summary was truncated.
func TestTruncatedSummaryKeepsAttachments(t *testing.T) {
	const spec = "  maxExecutors: 10\n  executorsPerNode: 2\n  queryServiceSelector:\n    matchLabels:\n      e6data.io/pool: burst\n"
	label := map[string]string{"e6data.io/pool": "burst"}
	own := qs("zz-own", "team-a", "burst", "pools", "ghcr.io/e6data/executor:3.1", "4", "16Gi", label)
	s := scenario{XR: xpool("burst", "pools", spec), Environment: []string{remoteEnv}, QueryServices: []string{}}
	rsp := s.run(t)
	s.Observed = observeAs(t, rsp, summaryOf(t, []string{own}, kwokCRDs), nil)
	rsp = s.run(t)
	if diff := cmp.Diff([]string{"team-a/zz-own"}, attachedTo(t, desired(rsp, "remote-capacity"))); diff != "" {
		t.Fatalf("complete summary: attached (-want +got):\n%s", diff)
	}
	if got := conditions(rsp)["WorkloadSummaryComplete"]; got != "TRUE/WorkloadSummaryComplete" {
		t.Errorf("complete summary: WorkloadSummaryComplete %s", got)
	}

	// The summary is cut at strangers that sort before the pool's own.
	var strangers []string
	for i := range 3 {
		strangers = append(strangers, qs(fmt.Sprintf("aa-%04d", i), "team-x", "burst", "pools", "evil/exec:1", "4", "16Gi", label))
	}
	cut := summaryOf(t, strangers, kwokCRDs)
	cut["truncated"] = true
	s.XR = withStatus(xpool("burst", "pools", spec), writtenStatus(t, status(rsp)))
	s.Observed = observeAs(t, rsp, cut, nil)
	rsp = s.run(t)
	if got := attachedTo(t, desired(rsp, "remote-capacity")); !slices.Contains(got, "team-a/zz-own") {
		t.Errorf("truncated summary: the pool's own QueryService was detached; attached %v", got)
	}
	if got := conditions(rsp)["WorkloadSummaryComplete"]; got != "FALSE/WorkloadSummaryTruncated" {
		t.Errorf("truncated summary: WorkloadSummaryComplete %s", got)
	}
	var msg string
	for _, c := range rsp.GetConditions() {
		if c.GetType() == "WorkloadSummaryComplete" {
			msg = c.GetMessage()
		}
	}
	if !strings.Contains(msg, "team-a/zz-own") {
		t.Errorf("truncated summary: the condition does not name the kept QueryService: %q", msg)
	}
	if ev := strings.Join(results(rsp), "\n"); !strings.Contains(ev, "WARNING WorkloadSummaryTruncated") {
		t.Errorf("no event says the summary was truncated:\n%s", ev)
	}
}

// TestTruncatedSummaryDetachesNothing replays the same attack on a remote
// pool whose status does not name its QueryServices (not written yet, or
// lost), with the eviction policies in force: a truncated summary without
// the pool's own QueryService emptied its PoolCapacity's queryServices,
// so the capacity provider took its executors for unauthorized and
// evicted them. A QueryService the observed PoolCapacity attaches stays
// attached while the summary is truncated.
func TestTruncatedSummaryDetachesNothing(t *testing.T) {
	const spec = remotePool + "  unauthorizedExecutors: Evict\n  queryServiceLimits: {maxPoolExecutors: 2, enforce: true}\n"
	own := qs("analytics", "team-a", "burst", "pools", "ghcr.io/e6data/executor:3.1", "4", "16Gi", nil)
	s := scenario{XR: xpool("burst", "pools", spec), Environment: []string{remoteEnv}, QueryServices: []string{}}
	rsp := s.run(t)
	s.Observed = observeAs(t, rsp, summaryOf(t, []string{own}, kwokCRDs), nil)
	rsp = s.run(t)
	if diff := cmp.Diff([]string{"team-a/analytics"}, attachedTo(t, desired(rsp, "remote-capacity"))); diff != "" {
		t.Fatalf("complete summary: attached (-want +got):\n%s", diff)
	}

	cases := map[string]struct {
		reason string
		status bool
	}{
		"StatusNamesIt":   {reason: "The previous status attaches the QueryService: it stays attached.", status: true},
		"NoStatusWritten": {reason: "Only the observed PoolCapacity attaches the QueryService: it stays attached.", status: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cut := summaryOf(t, nil, kwokCRDs)
			cut["truncated"] = true
			s := s
			if tc.status {
				s.XR = withStatus(xpool("burst", "pools", spec), writtenStatus(t, status(rsp)))
			}
			s.Observed = observeAs(t, rsp, cut, nil)
			got := s.run(t)
			c := desired(got, "remote-capacity")
			if diff := cmp.Diff([]string{"team-a/analytics"}, attachedTo(t, c)); diff != "" {
				t.Errorf("%s\ntruncated summary: attached (-want +got):\n%s", tc.reason, diff)
			}
			if p, _, _ := unstructured.NestedString(c.Object, "spec", "forProvider", "policies", "unauthorizedExecutors"); p != "Evict" {
				t.Errorf("%s\nthe PoolCapacity's unauthorizedExecutors policy is %q, want Evict (the case replayed)", tc.reason, p)
			}
			if got := conditions(got)["WorkloadSummaryComplete"]; got != "FALSE/WorkloadSummaryTruncated" {
				t.Errorf("%s\nWorkloadSummaryComplete %s", tc.reason, got)
			}
		})
	}
}
