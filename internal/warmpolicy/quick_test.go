package warmpolicy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeRoundTrip(t *testing.T) {
	var h History
	at := time.Date(2026, time.March, 2, 9, 0, 0, 0, time.UTC)
	for i := range 3 * 7 * 24 * 4 {
		h.Observe(at.Add(time.Duration(i)*SlotLength), int32(i%200), int32(i%37), int32(i%5))
	}
	s := h.Encode()
	if len(s) > MaxEncodedBytes {
		t.Fatalf("Encode: %d bytes, more than %d", len(s), MaxEncodedBytes)
	}
	got, err := Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&h, got, cmp.AllowUnexported(History{}, cell{}, figures{})); diff != "" {
		t.Errorf("Decode(Encode()): -want, +got:\n%s", diff)
	}
}
