package main

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
)

// defaultMaxRecvMiB is the function's default receive limit
// (--max-recv-message-size): 1,000 QueryServices of up to 30 KB each, or
// 4,000 of 8 KB.
const defaultMaxRecvMiB = 32

// measureRequest estimates the size of the QueryServices in req's required
// resources named by reqs: their number times the mean size of a few of
// them, so that it costs the same at any size. Below minSampled
// QueryServices it counts them only: a request that small is far from
// any limit.
func measureRequest(req *fnv1.RunFunctionRequest, reqs *fnv1.Requirements, limit int) decision.RequestSize {
	const sample, minSampled = 4, 64
	rs := decision.RequestSize{Limit: limit}
	var items [][]*fnv1.Resource
	for name := range reqs.GetResources() {
		if isQSRequirement(name) {
			it := req.GetRequiredResources()[name].GetItems()
			rs.QueryServices += len(it)
			items = append(items, it)
		}
	}
	if rs.QueryServices < minSampled {
		return rs
	}
	sampled, bytes := 0, 0
	for _, it := range items {
		for _, r := range it {
			if sampled == sample {
				break
			}
			sampled++
			bytes += proto.Size(r)
		}
	}
	rs.Bytes = bytes / sampled * rs.QueryServices
	return rs
}
