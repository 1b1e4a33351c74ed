package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
)

// TestReportsReused checks that status reports that did not change are
// sent back as observed, and that the result is what encoding them anew
// gives.
func TestReportsReused(t *testing.T) {
	checked := metav1.NewTime(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	reports := []poolv1alpha1.AttachedQueryService{
		{QueryService: poolv1alpha1.QueryServiceReference{Name: "a", Namespace: "team-a"}, Attached: true, Compatible: true, InstanceType: "m5.xlarge", RequiredCPU: "4", RequiredMemory: "30Gi", LastChecked: &checked, MaxPoolExecutors: 3},
		{QueryService: poolv1alpha1.QueryServiceReference{Name: "b", Namespace: "team-a"}, Attached: true, RequiredCPU: "64", RequiredMemory: "1Ti", Message: "needs more CPU", LastChecked: &checked},
		{QueryService: poolv1alpha1.QueryServiceReference{Name: "c", Namespace: "team-a"}, Attached: true, Compatible: true, LastChecked: &checked, MaxPoolExecutors: 2},
		{QueryService: poolv1alpha1.QueryServiceReference{Name: "rogue", Namespace: "team-c"}, Message: "not allowed", LastChecked: &checked},
	}
	observed := statusValue(poolv1alpha1.PoolStatus{Phase: "Active", AttachedQueryServices: reports}, false, nil).GetStructValue()
	prev := decodeStatus(observed)

	changed := append([]poolv1alpha1.AttachedQueryService{}, reports...)
	changed[1].Compatible = true
	changed[2].MaxPoolExecutors = 4
	changed = append(changed[:3], poolv1alpha1.AttachedQueryService{QueryService: poolv1alpha1.QueryServiceReference{Name: "new", Namespace: "team-b"}, LastChecked: &checked}, changed[3])
	st := poolv1alpha1.PoolStatus{Phase: "Active", AttachedQueryServices: changed}

	got := statusValue(st, false, newPreviousReports(prev.AttachedQueryServices, observed))
	if diff := cmp.Diff(statusValue(st, false, nil), got, protocmp.Transform()); diff != "" {
		t.Errorf("statusValue with the previous reports: -encoded anew, +got:\n%s", diff)
	}
	old := observed.GetFields()["attachedQueryServices"].GetListValue().GetValues()
	l := got.GetStructValue().GetFields()["attachedQueryServices"].GetListValue().GetValues()
	if l[0] != old[0] || l[4] != old[3] {
		t.Errorf("the unchanged reports of team-a/a (with a share) and team-c/rogue were encoded anew")
	}
	if l[1] == old[1] {
		t.Errorf("the changed report of team-a/b was reused")
	}
	if l[2] == old[2] {
		t.Errorf("the report of team-a/c, whose share changed, was reused")
	}
}
