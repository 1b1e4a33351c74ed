package sizing

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
)

func q(s string) resource.Quantity { return resource.MustParse(s) }

func TestLoadCatalogTypes(t *testing.T) {
	cases := map[string]struct {
		reason string
		cloud  Cloud
		name   string
		want   InstanceType
	}{
		"AWSr7gd8xlarge": {
			reason: "Graviton3 with 1x1900 GB NVMe: 1900x10^9 bytes are 1769 GiB.",
			cloud:  CloudAWS, name: "r7gd.8xlarge",
			want: InstanceType{Name: "r7gd.8xlarge", Family: "r7gd", Size: "8xlarge", CPU: q("32"), Memory: q("256Gi"), Arch: "arm64", LocalNVMeGiB: 1769, Pods: 234, PricePerHour: 2.32218},
		},
		"AWSr6gd8xlarge": {
			reason: "Graviton2 with 1x1900 GB NVMe.",
			cloud:  CloudAWS, name: "r6gd.8xlarge",
			want: InstanceType{Name: "r6gd.8xlarge", Family: "r6gd", Size: "8xlarge", CPU: q("32"), Memory: q("256Gi"), Arch: "arm64", LocalNVMeGiB: 1769, Pods: 234, PricePerHour: 1.8432},
		},
		"AWSx2gd16xlarge": {
			reason: "16 GiB per vCPU, 2x1900 GB NVMe.",
			cloud:  CloudAWS, name: "x2gd.16xlarge",
			want: InstanceType{Name: "x2gd.16xlarge", Family: "x2gd", Size: "16xlarge", CPU: q("64"), Memory: q("1024Gi"), Arch: "arm64", LocalNVMeGiB: 3539, Pods: 737, PricePerHour: 5.344},
		},
		"AWSi4iMetal": {
			reason: "8x3750 GB NVMe.",
			cloud:  CloudAWS, name: "i4i.metal",
			want: InstanceType{Name: "i4i.metal", Family: "i4i", Size: "metal", CPU: q("128"), Memory: q("1024Gi"), Arch: "amd64", LocalNVMeGiB: 27939, Pods: 737, PricePerHour: 10.9824},
		},
		"AWSr7iMetal48xl": {
			reason: "Sizes with a dash keep it.",
			cloud:  CloudAWS, name: "r7i.metal-48xl",
			want: InstanceType{Name: "r7i.metal-48xl", Family: "r7i", Size: "metal-48xl", CPU: q("192"), Memory: q("1536Gi"), Arch: "amd64", Pods: 737, PricePerHour: 12.7008},
		},
		"GCPn2Highmem128": {
			reason: "The largest n2-highmem has 864 GB, not 8 per vCPU.",
			cloud:  CloudGCP, name: "n2-highmem-128",
			want: InstanceType{Name: "n2-highmem-128", Family: "n2-highmem", Size: "128", CPU: q("128"), Memory: q("864Gi"), Arch: "amd64", PricePerHour: 7.70698},
		},
		"AzureE96dsv5": {
			reason: "E96ds_v5 has 672 GiB and a 3600 GiB local disk.",
			cloud:  CloudAzure, name: "Standard_E96ds_v5",
			want: InstanceType{Name: "Standard_E96ds_v5", Family: "Edsv5", Size: "96", CPU: q("96"), Memory: q("672Gi"), Arch: "amd64", LocalNVMeGiB: 3600, PricePerHour: 6.912},
		},
		"AzureE32pdsv5": {
			reason: "The largest Epdsv5 has 208 GiB.",
			cloud:  CloudAzure, name: "Standard_E32pds_v5",
			want: InstanceType{Name: "Standard_E32pds_v5", Family: "Epdsv5", Size: "32", CPU: q("32"), Memory: q("208Gi"), Arch: "arm64", LocalNVMeGiB: 1200, PricePerHour: 1.824},
		},
		"LinodeDedicated512": {
			reason: "The largest dedicated plan.",
			cloud:  CloudLinode, name: "g6-dedicated-64",
			want: InstanceType{Name: "g6-dedicated-64", Family: "g6-dedicated", Size: "64", CPU: q("64"), Memory: q("512Gi"), Arch: "amd64", PricePerHour: 6.912},
		},
		"DigitalOceanMemoryOptimized": {
			reason: "Slug families are the slug's first part.",
			cloud:  CloudDigitalOcean, name: "m-32vcpu-256gb",
			want: InstanceType{Name: "m-32vcpu-256gb", Family: "m", Size: "32vcpu-256gb", CPU: q("32"), Memory: q("256Gi"), Arch: "amd64", PricePerHour: 2},
		},
		"CoreWeaveGenoa": {
			reason: "The listed CPU instance price; 7.68 TB NVMe.",
			cloud:  CloudCoreWeave, name: "cd-gp-a192-genoa",
			want: InstanceType{Name: "cd-gp-a192-genoa", Family: "cd-gp", Size: "a192-genoa", CPU: q("192"), Memory: q("1536Gi"), Arch: "amd64", LocalNVMeGiB: 7152, PricePerHour: 7.78},
		},
		"KWOK": {
			reason: "kwok provider names: family, vCPU, arch, os; the size is the vCPU count.",
			cloud:  CloudKWOK, name: "m-4x-arm64-linux",
			want: InstanceType{Name: "m-4x-arm64-linux", Family: "m", Size: "4", CPU: q("4"), Memory: q("32Gi"), Arch: "arm64", PricePerHour: 0.13436},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := mustType(t, tc.cloud, tc.name)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nLookup(%q): -want, +got:\n%s", tc.reason, tc.name, diff)
			}
		})
	}
}

// TestAWSFamiliesHaveAllSizes checks every size of the families pools are
// sized from is listed.
func TestAWSFamiliesHaveAllSizes(t *testing.T) {
	gen6 := []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge", "metal"}
	gen7 := []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "metal-24xl", "48xlarge", "metal-48xl"}
	graviton := []string{"medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "metal"}
	want := map[string][]string{
		"c6i":  gen6,
		"c7g":  graviton,
		"i4i":  gen6,
		"m6i":  gen6,
		"m7g":  graviton,
		"m7i":  gen7,
		"r5":   {"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "metal"},
		"r6g":  graviton,
		"r6gd": graviton,
		"r6i":  gen6,
		"r6id": gen6,
		"r7g":  graviton,
		"r7gd": graviton,
		"r7i":  gen7,
		"r8g":  {"medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "metal-24xl", "48xlarge", "metal-48xl"},
		"x2gd": graviton,
	}
	cat, err := LoadCatalog(CloudAWS)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range cat.Families() {
		for _, it := range cat.Family(f) {
			got[f] = append(got[f], it.Size)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AWS families and sizes, smallest first: -want, +got:\n%s", diff)
	}
}

func TestCatalogFamilies(t *testing.T) {
	want := map[Cloud][]string{
		CloudAWS:          {"c6i", "c7g", "i4i", "m6i", "m7g", "m7i", "r5", "r6g", "r6gd", "r6i", "r6id", "r7g", "r7gd", "r7i", "r8g", "x2gd"},
		CloudGCP:          {"c3-highcpu", "c3-highmem", "c3-standard", "c3d-highcpu", "c3d-highmem", "c3d-standard", "n2-highcpu", "n2-highmem", "n2-standard", "n2d-highcpu", "n2d-highmem", "n2d-standard"},
		CloudAzure:        {"Dpsv5", "Dsv5", "Edsv5", "Epdsv5", "Esv5"},
		CloudLinode:       {"g6-dedicated", "g7-highmem"},
		CloudDigitalOcean: {"c", "g", "m", "s"},
		CloudCoreWeave:    {"cd-gp", "cd-gp-l", "cd-hc", "cd-hp", "turin-gp", "turin-gp-l"},
		CloudKWOK:         {"c", "m", "s"},
	}
	got := map[Cloud][]string{}
	for _, c := range Clouds() {
		cat, err := LoadCatalog(c)
		if err != nil {
			t.Fatalf("LoadCatalog(%s): %v", c, err)
		}
		got[c] = cat.Families()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Families(): -want, +got:\n%s", diff)
	}
}

// TestCatalogInvariants checks every embedded catalog: version and region
// set, types sorted and valid, and a size for every type.
func TestCatalogInvariants(t *testing.T) {
	for _, c := range Clouds() {
		t.Run(string(c), func(t *testing.T) {
			cat, err := LoadCatalog(c)
			if err != nil {
				t.Fatal(err)
			}
			if cat.Cloud != c || cat.Version == "" || cat.Region == "" || len(cat.Types) == 0 {
				t.Fatalf("catalog %s: cloud %q, version %q, region %q, %d types", c, cat.Cloud, cat.Version, cat.Region, len(cat.Types))
			}
			if !slices.IsSortedFunc(cat.Types, compareTypes) {
				t.Errorf("catalog %s is not sorted by family and size", c)
			}
			for _, it := range cat.Types {
				if err := validateType(it); err != nil {
					t.Error(err)
				}
				if it.Size == "" || it.PricePerHour <= 0 {
					t.Errorf("%s: size %q, price %v", it.Name, it.Size, it.PricePerHour)
				}
			}
		})
	}
}

func TestLoadCatalogUnknownCloud(t *testing.T) {
	_, err := LoadCatalog("onprem")
	want := `no instance catalog for cloud "onprem"; known clouds are aws, azure, coreweave, digitalocean, gcp, kwok, linode`
	if err == nil || err.Error() != want {
		t.Errorf("LoadCatalog(onprem): want error %q, got %v", want, err)
	}
}

func TestLoadCatalogReturnsACopy(t *testing.T) {
	a, err := LoadCatalog(CloudAWS)
	if err != nil {
		t.Fatal(err)
	}
	a.Types[0].Name = "changed"
	a.Types[0].CPU.Add(q("1000"))
	b, err := LoadCatalog(CloudAWS)
	if err != nil {
		t.Fatal(err)
	}
	if b.Types[0].Name != "c6i.large" || b.Types[0].CPU.Cmp(q("2")) != 0 {
		t.Errorf("changing a loaded catalog changed the next one: %s with %s CPU", b.Types[0].Name, b.Types[0].CPU.String())
	}
}

func TestWithOverrides(t *testing.T) {
	base := &Catalog{Cloud: CloudAWS, Version: "1", Region: "us-east-1", Types: []InstanceType{
		{Name: "r7gd.4xlarge", Family: "r7gd", Size: "4xlarge", CPU: q("16"), Memory: q("128Gi"), Arch: "arm64", LocalNVMeGiB: 884, PricePerHour: 1.16},
		{Name: "r7gd.8xlarge", Family: "r7gd", Size: "8xlarge", CPU: q("32"), Memory: q("256Gi"), Arch: "arm64", LocalNVMeGiB: 1769, PricePerHour: 2.32},
	}}
	cases := map[string]struct {
		reason string
		extra  []InstanceType
		want   *Catalog
	}{
		"None": {
			reason: "No overrides give the same types and version.",
			want:   base,
		},
		"ReplaceByName": {
			reason: "An entry named like a catalog type replaces it, keeping its family when none is given.",
			extra:  []InstanceType{{Name: "r7gd.8xlarge", CPU: q("32"), Memory: q("256Gi"), Arch: "arm64", PricePerHour: 1.5}},
			want: &Catalog{Cloud: CloudAWS, Version: "1+1 overrides", Region: "us-east-1", Types: []InstanceType{
				base.Types[0],
				{Name: "r7gd.8xlarge", Family: "r7gd", Size: "8xlarge", CPU: q("32"), Memory: q("256Gi"), Arch: "arm64", PricePerHour: 1.5},
			}},
		},
		"AddOnPremises": {
			reason: "A new name is added, in its own family when none is given, sized by its vCPU count, and sorted in.",
			extra:  []InstanceType{{Name: "rack-a", CPU: q("96"), Memory: q("768Gi"), Arch: "amd64", LocalNVMeGiB: 7000}},
			want: &Catalog{Cloud: CloudAWS, Version: "1+1 overrides", Region: "us-east-1", Types: []InstanceType{
				base.Types[0], base.Types[1],
				{Name: "rack-a", Family: "rack-a", Size: "96", CPU: q("96"), Memory: q("768Gi"), Arch: "amd64", LocalNVMeGiB: 7000},
			}},
		},
		"SkipUnusable": {
			reason: "Entries without a name, CPU or memory, or with an unknown arch are skipped.",
			extra: []InstanceType{
				{CPU: q("1"), Memory: q("1Gi"), Arch: "amd64"},
				{Name: "no-cpu", Memory: q("1Gi"), Arch: "amd64"},
				{Name: "no-memory", CPU: q("1"), Arch: "amd64"},
				{Name: "riscv", CPU: q("1"), Memory: q("1Gi"), Arch: "riscv64"},
			},
			want: base,
		},
		"LastWins": {
			reason: "Of two entries with one name the last wins; families sort by name (r7gd before rack).",
			extra: []InstanceType{
				{Name: "rack-b", Family: "rack", CPU: q("8"), Memory: q("64Gi"), Arch: "arm64", PricePerHour: 1},
				{Name: "rack-b", Family: "rack", CPU: q("8"), Memory: q("64Gi"), Arch: "arm64", PricePerHour: 2},
			},
			want: &Catalog{Cloud: CloudAWS, Version: "1+2 overrides", Region: "us-east-1", Types: []InstanceType{
				base.Types[0], base.Types[1],
				{Name: "rack-b", Family: "rack", Size: "b", CPU: q("8"), Memory: q("64Gi"), Arch: "arm64", PricePerHour: 2},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := base.WithOverrides(tc.extra)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(Catalog{})); diff != "" {
				t.Errorf("%s\nWithOverrides(...): -want, +got:\n%s", tc.reason, diff)
			}
			for _, it := range got.Types {
				if found, ok := got.Lookup(it.Name); !ok || found.Name != it.Name {
					t.Errorf("%s\nLookup(%q) after WithOverrides: %v, %v", tc.reason, it.Name, found.Name, ok)
				}
			}
			if len(base.Types) != 2 || base.Version != "1" || base.Types[1].PricePerHour != 2.32 {
				t.Errorf("%s\nWithOverrides changed the catalog it was called on", tc.reason)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	cat, err := LoadCatalog(CloudAWS)
	if err != nil {
		t.Fatal(err)
	}
	literal := &Catalog{Types: slices.Clone(cat.Types)} // no index
	cases := map[string]struct {
		reason string
		cat    *Catalog
		name   string
		want   string
		ok     bool
	}{
		"Found":          {reason: "A listed type is found.", cat: cat, name: "r7gd.16xlarge", want: "r7gd.16xlarge", ok: true},
		"Missing":        {reason: "An unlisted type is not.", cat: cat, name: "r7gd.9xlarge"},
		"LiteralCatalog": {reason: "A catalog built as a literal is searched.", cat: literal, name: "x2gd.medium", want: "x2gd.medium", ok: true},
		"NilCatalog":     {reason: "A nil catalog has nothing.", name: "x2gd.medium"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := tc.cat.Lookup(tc.name)
			if ok != tc.ok || got.Name != tc.want {
				t.Errorf("%s\nLookup(%q): want %q, %v; got %q, %v", tc.reason, tc.name, tc.want, tc.ok, got.Name, ok)
			}
		})
	}
}

// TestCatalogFilesNameSources checks each data file says where its figures
// come from and that its prices are approximate.
func TestCatalogFilesNameSources(t *testing.T) {
	for _, c := range Clouds() {
		raw, err := catalogFiles.ReadFile("catalogs/" + string(c) + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		s := string(raw)
		if !strings.HasPrefix(s, "# ") || !strings.Contains(s, "Prices") && !strings.Contains(s, "prices") {
			t.Errorf("catalogs/%s.yaml: the header must describe the figures and their prices", c)
		}
		if strings.Count(s, "specsSource:") != strings.Count(s, "- family:") || strings.Count(s, "priceSource:") != strings.Count(s, "- family:") {
			t.Errorf("catalogs/%s.yaml: every family must name specsSource and priceSource", c)
		}
	}
}
