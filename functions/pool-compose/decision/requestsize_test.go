package decision

import (
	"strings"
	"testing"
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
