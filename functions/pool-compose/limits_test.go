package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"
)

func TestSizeWarning(t *testing.T) {
	cases := map[string]struct {
		reason string
		rs     RequestSize
		want   []string // substrings; none: no warning
	}{
		"Small":        {reason: "A pool well inside the limits is not warned.", rs: RequestSize{QueryServices: 10, Bytes: 80 << 10, Limit: 32 << 20}},
		"AtTheSupport": {reason: "The largest supported pool is not warned.", rs: RequestSize{QueryServices: maxQueryServices, Bytes: 8 << 20, Limit: 32 << 20}},
		"TooMany": {reason: "More QueryServices than supported are named, with what to do.", rs: RequestSize{QueryServices: maxQueryServices + 1, Bytes: 8 << 20, Limit: 32 << 20},
			want: []string{"fetches 1001 QueryServices (about 8.0 MiB)", "the largest supported pool fetches 1000", "narrow queryServiceSelector"}},
		"NearTheLimit": {reason: "A request past half the receive limit is warned, naming the limit and what happens past it.", rs: RequestSize{QueryServices: 600, Bytes: 20 << 20, Limit: 32 << 20},
			want: []string{"about 20.0 MiB", "receive limit of 32.0 MiB (--max-recv-message-size)", "ResourceExhausted"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := sizeWarning(tc.rs)
			if len(tc.want) == 0 && got != "" {
				t.Errorf("%s\nsizeWarning(%+v) = %q, want none", tc.reason, tc.rs, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s\nsizeWarning(%+v) = %q, want it to contain %q", tc.reason, tc.rs, got, w)
				}
			}
		})
	}
}

// TestSizeWarningOnClaim checks that a request near the receive limit puts
// a warning on the claim, and that the estimate is the request's size.
func TestSizeWarningOnClaim(t *testing.T) {
	req := benchRequest(t, 80, 1, true)
	f := &Function{now: func() time.Time { return now }, size: fakeSize, maxRecv: 800 << 10}
	rsp, err := f.RunFunction(t.Context(), req)
	if err != nil || fatal(rsp) != "" {
		t.Fatalf("RunFunction: %v %s", err, fatal(rsp))
	}
	var got []string
	for _, r := range results(rsp) {
		if strings.Contains(r, "RequestNearSizeLimit") {
			got = append(got, r)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "the pool fetches 80 QueryServices") || !strings.Contains(got[0], "receive limit of 0.8 MiB") {
		t.Errorf("want one RequestNearSizeLimit warning, got %q", got)
	}
	if rs := requestSize(req, rsp.GetRequirements(), 0); rs.Bytes < 80*7000 || rs.Bytes > 80*9000 {
		t.Errorf("estimated %d bytes for 80 QueryServices of about 8 KB", rs.Bytes)
	}
}

// TestDefaultReceiveLimit checks the flag's default against the documented
// limit.
func TestDefaultReceiveLimit(t *testing.T) {
	var c CLI
	p, err := kong.New(&c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strconv.Itoa(defaultMaxRecvMiB), strconv.Itoa(c.MaxRecvMessageSize)); diff != "" {
		t.Errorf("--max-recv-message-size default: -documented, +flag:\n%s", diff)
	}
}
