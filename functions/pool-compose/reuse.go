package main

import (
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// previousReports keeps the XPool's observed status.attachedQueryServices
// entries as Crossplane sent them, beside their decoded form, so that the
// report of a QueryService that did not change is sent back as it came
// instead of being encoded again: at a thousand QueryServices, encoding
// their reports is most of what a call allocates.
type previousReports struct {
	decoded []poolv1alpha1.AttachedQueryService
	raw     []*structpb.Value
	next    int
}

// newPreviousReports pairs the decoded previous status with the observed
// XPool's raw entries, skipped where decodeStatus skips them.
func newPreviousReports(decoded []poolv1alpha1.AttachedQueryService, status *structpb.Struct) *previousReports {
	p := &previousReports{decoded: decoded}
	for _, v := range observed.Field(status, "attachedQueryServices").GetListValue().GetValues() {
		if v.GetStructValue() != nil {
			p.raw = append(p.raw, v)
		}
	}
	if len(p.raw) != len(p.decoded) {
		return nil
	}
	return p
}

// reuse returns the observed entry that encodes a exactly, or nil. Calls
// must come in namespace and name order, the order of status (Attach sorts
// it), so each finds its entry by walking forward.
func (p *previousReports) reuse(a poolv1alpha1.AttachedQueryService) *structpb.Value {
	if p == nil {
		return nil
	}
	for ; p.next < len(p.decoded); p.next++ {
		d := p.decoded[p.next]
		c := strings.Compare(d.QueryService.Namespace, a.QueryService.Namespace)
		if c == 0 {
			c = strings.Compare(d.QueryService.Name, a.QueryService.Name)
		}
		if c > 0 {
			return nil
		}
		if c < 0 {
			continue
		}
		p.next++
		if !sameReport(d, a) || len(p.raw[p.next-1].GetStructValue().GetFields()) != reportFields(a) {
			return nil
		}
		return p.raw[p.next-1]
	}
	return nil
}

// sameReport compares two reports, their times by value.
func sameReport(a, b poolv1alpha1.AttachedQueryService) bool {
	at, bt := a.LastChecked, b.LastChecked
	a.LastChecked, b.LastChecked = nil, nil
	if a != b || (at == nil) != (bt == nil) {
		return false
	}
	return at == nil || at.UTC().Truncate(1e9).Equal(bt.UTC().Truncate(1e9))
}

// reportFields is how many fields statusValue writes for a, so that an
// observed entry with a field this version does not write is encoded anew.
func reportFields(a poolv1alpha1.AttachedQueryService) int {
	n := 3 // queryService, compatible and attached are always written
	for _, set := range []bool{a.InstanceType != "", a.RequiredCPU != "", a.RequiredMemory != "", a.Message != "", a.LastChecked != nil, a.MaxPoolExecutors > 0} {
		if set {
			n++
		}
	}
	return n
}
