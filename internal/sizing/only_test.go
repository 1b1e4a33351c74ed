package sizing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCatalogOnly(t *testing.T) {
	cat, err := LoadCatalog(CloudAWS)
	if err != nil {
		t.Fatal(err)
	}
	only := cat.Only(func(it InstanceType) bool { return it.Family == "r6i" })
	var families []string
	for _, it := range only.Types {
		if len(families) == 0 || families[len(families)-1] != it.Family {
			families = append(families, it.Family)
		}
	}
	_, kept := only.Lookup("r6i.large")
	_, dropped := only.Lookup("r7gd.4xlarge")
	_, still := cat.Lookup("r7gd.4xlarge")
	got := map[string]any{"families": families, "kept": kept, "dropped": dropped, "unchanged": still}
	want := map[string]any{"families": []string{"r6i"}, "kept": true, "dropped": false, "unchanged": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Only keeps the r6i family and leaves the catalog as it was: -want, +got:\n%s", diff)
	}
}
