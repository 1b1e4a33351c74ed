package sizing

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/burstpool/burstpool/test/reference"
)

// TestReferenceSizingTable reads the instance type table of the Pool
// reference (section 8.2, executor memory against recommended AWS types)
// from the reference's own text and sizes each row from each named family:
// one executor per node, requesting the row's memory and 1 vCPU per 2Gi,
// at most 60 CPU (what the largest r7gd holds with the pool's DaemonSets),
// so 15 CPU / 30Gi, 30 CPU / 60Gi, 60 CPU / 120Gi and 60 CPU / 240Gi. A
// named type must be what its family derives (for a .metal type, the
// family's type of the same CPU and memory: r7gd.16xlarge for r7gd.metal,
// both 64 vCPU / 512Gi, since metal is only offered when asked); a family
// named as "instances" must derive one of its types.
func TestReferenceSizingTable(t *testing.T) {
	raw, found, folder := reference.SeedForTest(t)
	if !found {
		// A plain clone has no seeds beside it; the table is checked
		// wherever the reference is (CI runs with it).
		t.Skipf("the Pool reference is not beside this checkout (%s): section 8.2 cannot be read", folder)
	}
	rows := sizingTable(t, raw)
	if len(rows) != 4 {
		t.Fatalf("section 8.2 has %d rows, want the 4 this test knows: %q", len(rows), rows)
	}
	cat := mustCatalog(t, CloudAWS)
	for _, row := range rows {
		memGi := strings.TrimSuffix(strings.TrimSuffix(row[0], "+"), "Gi")
		var gi int64
		if _, err := fmt.Sscan(memGi, &gi); err != nil {
			t.Fatalf("row %q: executor memory %q is not NGi", row, row[0])
		}
		ex := Executor{QueryService: "reference/row", CPU: *resource.NewQuantity(min(gi/2, 60), resource.DecimalSI), Memory: resource.MustParse(memGi + "Gi")}
		for _, rec := range strings.Split(row[1], ",") {
			rec = strings.TrimSpace(rec)
			family, want, _ := strings.Cut(rec, ".")
			family = strings.TrimSuffix(family, " instances")
			got, err := Derive(Input{Cloud: CloudAWS, Catalog: cat, InstanceFamily: family, Overhead: poolOverhead, Executors: []Executor{ex}})
			if err != nil {
				t.Errorf("%s executor, %s: %v", row[0], rec, err)
				continue
			}
			if !got.Compatibility[0].Compatible {
				t.Errorf("%s executor, %s: incompatible: %s", row[0], rec, got.Compatibility[0].Message)
				continue
			}
			gt, _ := cat.Lookup(got.InstanceType)
			switch {
			case want == "":
				if gt.Family != family {
					t.Errorf("%s executor: family %s derived %s", row[0], family, got.InstanceType)
				}
			case strings.HasPrefix(want, "metal"):
				mt, ok := cat.Lookup(rec)
				if !ok || mt.CPU.Cmp(gt.CPU) != 0 || mt.Memory.Cmp(gt.Memory) != 0 {
					t.Errorf("%s executor: family %s derived %s (%s vCPU / %s), want the shape of %s", row[0], family, got.InstanceType, gt.CPU.String(), gt.Memory.String(), rec)
				}
			case got.InstanceType != rec:
				t.Errorf("%s executor (%s CPU): family %s derived %s, the reference recommends %s", row[0], ex.CPU.String(), family, got.InstanceType, rec)
			}
		}
	}
}

// sizingTable returns the rows of section 8.2: executor memory and the
// recommended types as written.
func sizingTable(t *testing.T, ref string) [][2]string {
	t.Helper()
	_, rest, ok := strings.Cut(ref, "8.2 Instance Type Selection")
	if !ok {
		t.Fatal("the reference has no section 8.2 Instance Type Selection")
	}
	section, _, _ := strings.Cut(rest, "8.3 ")
	var rows [][2]string
	for _, line := range strings.Split(section, "\n") {
		line = strings.TrimSpace(line)
		mem, recs, ok := strings.Cut(line, " ")
		if !ok || !strings.HasSuffix(strings.TrimSuffix(mem, "+"), "Gi") {
			continue
		}
		rows = append(rows, [2]string{mem, recs})
	}
	return rows
}
