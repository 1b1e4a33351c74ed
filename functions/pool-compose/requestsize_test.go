package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"
)

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
	if rs := measureRequest(req, rsp.GetRequirements(), 0); rs.Bytes < 80*7000 || rs.Bytes > 80*9000 {
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
