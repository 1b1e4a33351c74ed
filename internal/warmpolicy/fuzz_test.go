package warmpolicy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecode feeds Decode anything: it never panics, returns an empty
// History with its error, and what it accepts encodes and decodes back to
// itself within the size bound.
func FuzzDecode(f *testing.F) {
	f.Add("")
	f.Add((&History{}).Encode())
	f.Add(record(observation{at: monday, wanted: 5, starts: 5, coldStart: 1}).Encode())
	f.Add(full(func(i int) observation {
		return observation{wanted: int32(i % 300), starts: int32(i % 50), coldStart: int32(i % 3)}
	}).Encode())
	f.Add("AQ")
	f.Add("Ag")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Decode(s)
		if err != nil {
			if diff := cmp.Diff(&History{}, h, allowHistory); diff != "" {
				t.Fatalf("Decode(%q) failed but returned a history: %s", s, diff)
			}
			return
		}
		again := h.Encode()
		if len(again) > MaxEncodedBytes {
			t.Fatalf("Encode(Decode(%q)): %d bytes", s, len(again))
		}
		back, err := Decode(again)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode(%q))): %v", s, err)
		}
		if diff := cmp.Diff(h, back, allowHistory); diff != "" {
			t.Fatalf("Decode(Encode(h)) differs from h: %s", diff)
		}
		// What it accepts can be observed on.
		h.Observe(monday.Add(time.Hour), 3, 2, 1)
	})
}
