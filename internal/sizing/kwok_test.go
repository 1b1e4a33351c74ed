package sizing

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/burstpool/burstpool/test/harness/golden"
)

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

// TestKWOKInstanceTypesJSONOfAWS renders the AWS catalog for the kwok
// provider: its types under their real names, with the catalog's figures,
// in the region's zones.
func TestKWOKInstanceTypesJSONOfAWS(t *testing.T) {
	cat, err := LoadCatalog(CloudAWS)
	if err != nil {
		t.Fatal(err)
	}
	b, err := KWOKInstanceTypesJSON(cat)
	if err != nil {
		t.Fatal(err)
	}
	var types []kwokInstanceType
	if err := json.Unmarshal(b, &types); err != nil {
		t.Fatal(err)
	}
	if len(types) != len(cat.Types) {
		t.Errorf("%d kwok types, want the catalog's %d", len(types), len(cat.Types))
	}
	for _, name := range []string{"r7gd.16xlarge", "r6gd.8xlarge", "m7i.2xlarge", "r7gd.medium"} {
		want, ok := cat.Lookup(name)
		if !ok {
			t.Fatalf("the AWS catalog has no %s", name)
		}
		var got *kwokInstanceType
		for i := range types {
			if types[i].Name == name {
				got = &types[i]
			}
		}
		if got == nil {
			t.Fatalf("%s is not offered", name)
		}
		// The kwok provider takes 100m and 10Mi from a type's resources
		// (kwok/cloudprovider/helpers.go); what is left must be what
		// Karpenter's AWS provider predicts for the real type.
		cpu, mem := got.Resources[corev1.ResourceCPU], got.Resources[corev1.ResourceMemory]
		cpu.Sub(resource.MustParse("100m"))
		mem.Sub(resource.MustParse("10Mi"))
		alloc := NodeAllocatable(CloudAWS, want)
		if cpu.Cmp(alloc.CPU) != 0 || mem.Cmp(alloc.Memory) != 0 || got.Architecture != want.Arch {
			t.Errorf("%s: a simulated node offers cpu %s memory %s arch %s, want what Karpenter's AWS provider predicts, %s %s %s", name, cpu.String(), mem.String(), got.Architecture, alloc.CPU.String(), alloc.Memory.String(), want.Arch)
		}
		if pods := got.Resources[corev1.ResourcePods]; pods.Value() != min(want.Pods, MaxPods) {
			t.Errorf("%s: %s pods, want the %d its ENIs address (at most %d)", name, pods.String(), want.Pods, MaxPods)
		}
		offered := map[string]float64{}
		for _, o := range got.Offerings {
			offered[o.Requirements[0].Values[0]+"/"+o.Requirements[1].Values[0]] = o.Price
		}
		wantOffers := map[string]float64{}
		for _, z := range []string{"us-east-1a", "us-east-1b", "us-east-1c"} {
			wantOffers["on-demand/"+z] = want.PricePerHour
			wantOffers["spot/"+z] = want.PricePerHour * KWOKSpotDiscount
		}
		if diff := cmp.Diff(wantOffers, offered); diff != "" {
			t.Errorf("%s offerings (-want +got):\n%s", name, diff)
		}
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
	golden.File(t, filepath.Join("testdata", "kwok-instance-types.json"), got)
}
