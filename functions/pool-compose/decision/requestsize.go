package decision

import (
	"fmt"
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
