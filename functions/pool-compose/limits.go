package main

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
)

// The largest pool the function supports, and the size of request it
// needs. Crossplane sends each request as one gRPC message, which the
// function refuses past its receive limit (--max-recv-message-size): the
// call fails before the function runs, and Crossplane reports
// "ResourceExhausted: grpc: received message larger than max" in the
// XPool's and claim's Synced condition. Requests grow with the QueryServices
// the pool fetches (about 8 KB each as the API server returns them, with
// managedFields, the last-applied annotation and status) and the pool's
// observed objects (a few KB per warm image).
const (
	// maxQueryServices is the most QueryServices a pool may fetch
	// (attached, allowed or labelled for it): 1,000 QueryServices of 8 KB
	// make an 8 MiB request, a quarter of the default receive limit.
	maxQueryServices = 1000
	// defaultMaxRecvMiB is the default receive limit: 1,000 QueryServices
	// of up to 30 KB each, or 4,000 of 8 KB.
	defaultMaxRecvMiB = 32
	// warnShare is the share of the receive limit past which the claim
	// is warned.
	warnShare = 0.5
)

// RequestSize is what the function knows of its request's size.
type RequestSize struct {
	// QueryServices is how many Crossplane supplied.
	QueryServices int
	// Bytes is the encoded size of the QueryServices, estimated from a
	// sample of them.
	Bytes int
	// Limit is the function's receive limit in bytes; 0 when unknown.
	Limit int
}

// requestSize estimates the size of the QueryServices in req's required
// resources named by reqs: their number times the mean size of a few of
// them, so that it costs the same at any size. Below minSampled
// QueryServices it counts them only: a request that small is far from
// any limit.
func requestSize(req *fnv1.RunFunctionRequest, reqs *fnv1.Requirements, limit int) RequestSize {
	const sample, minSampled = 4, 64
	rs := RequestSize{Limit: limit}
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

// sizeWarning says, in words for the claim, when the pool's request is
// larger than the function supports or near its receive limit; "" when
// neither.
func sizeWarning(rs RequestSize) string {
	mib := func(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	over := rs.QueryServices > maxQueryServices
	near := rs.Limit > 0 && float64(rs.Bytes) > warnShare*float64(rs.Limit)
	if !over && !near {
		return ""
	}
	msg := fmt.Sprintf("the pool fetches %d QueryServices (about %s)", rs.QueryServices, mib(rs.Bytes))
	if over {
		msg += fmt.Sprintf("; the largest supported pool fetches %d", maxQueryServices)
	}
	if rs.Limit > 0 {
		msg += fmt.Sprintf("; requests past the function's receive limit of %s (--max-recv-message-size) fail before it runs, and the claim's Synced condition reports ResourceExhausted", mib(rs.Limit))
	}
	return msg + ": narrow queryServiceSelector or allowedQueryServices, or split the pool"
}
