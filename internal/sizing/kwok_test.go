package sizing

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

func TestKWOKInstanceTypesJSON(t *testing.T) {
	cat := &Catalog{Cloud: CloudKWOK, Version: "test", Types: []InstanceType{
		{Name: "m-2x-arm64-linux", Family: "m", Size: "2", CPU: q("2"), Memory: q("16Gi"), Arch: "arm64", PricePerHour: 0.1},
		{Name: "r7gd.medium", Family: "r7gd", Size: "medium", CPU: q("1"), Memory: q("8Gi"), Arch: "arm64", LocalNVMeGiB: 54, PricePerHour: 0.5},
	}}
	zone := func(capacity, zone string, price float64) string {
		return `{"Price":` + price64(price) + `,"Available":true,"Requirements":[` +
			`{"key":"karpenter.sh/capacity-type","operator":"In","values":["` + capacity + `"]},` +
			`{"key":"topology.kubernetes.io/zone","operator":"In","values":["` + zone + `"]}]}`
	}
	offerings := func(price, spot float64) string {
		s := ""
		for i, z := range []string{"test-zone-a", "test-zone-b", "test-zone-c", "test-zone-d"} {
			if i > 0 {
				s += ","
			}
			s += zone("spot", z, spot) + "," + zone("on-demand", z, price)
		}
		return s
	}
	want := `[` +
		`{"name":"m-2x-arm64-linux","offerings":[` + offerings(0.1, 0.06999999999999999) + `],"architecture":"arm64","operatingSystems":["linux"],` +
		`"resources":{"cpu":"2","ephemeral-storage":"20Gi","memory":"16Gi","pods":"110"}},` +
		`{"name":"r7gd.medium","offerings":[` + offerings(0.5, 0.35) + `],"architecture":"arm64","operatingSystems":["linux"],` +
		`"resources":{"cpu":"1","ephemeral-storage":"54Gi","memory":"8Gi","pods":"110"}}` +
		`]`

	got, err := KWOKInstanceTypesJSON(cat)
	if err != nil {
		t.Fatal(err)
	}
	var compact json.RawMessage
	if err := json.Unmarshal(got, &compact); err != nil {
		t.Fatalf("KWOKInstanceTypesJSON wrote invalid JSON: %v", err)
	}
	gotCompact, _ := json.Marshal(compact)
	if diff := cmp.Diff(want, string(gotCompact)); diff != "" {
		t.Errorf("KWOKInstanceTypesJSON: each type on linux in four zones, spot at 70%%, NVMe as ephemeral-storage: -want, +got:\n%s", diff)
	}
}

func price64(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func TestKWOKInstanceTypesJSONNoCatalog(t *testing.T) {
	_, err := KWOKInstanceTypesJSON(nil)
	want := "cannot render kwok instance types: no catalog"
	if err == nil || err.Error() != want {
		t.Errorf("KWOKInstanceTypesJSON(nil): want error %q, got %v", want, err)
	}
}

// TestKWOKCatalogGolden keeps the rendering of the embedded kwok catalog,
// the file a kwok cluster's Karpenter reads, in testdata. Run with -update
// to rewrite it after changing the catalog, and review the diff.
func TestKWOKCatalogGolden(t *testing.T) {
	got, err := KWOKInstanceTypesJSON(mustCatalog(t, CloudKWOK))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "kwok-instance-types.json")
	if *update {
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/sizing/ -run TestKWOKCatalogGolden -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("kwok instance types differ from %s (rerun with -update if the change is intended): -want, +got:\n%s", path, diff)
	}
}
