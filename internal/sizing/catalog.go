package sizing

import (
	"embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/pkg/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// Cloud names a cloud whose instance catalog burstpool ships. The values are
// those of spec.provisioning.cloud.
type Cloud string

// Clouds with an embedded catalog.
const (
	CloudAWS          Cloud = "aws"
	CloudGCP          Cloud = "gcp"
	CloudAzure        Cloud = "azure"
	CloudLinode       Cloud = "linode"
	CloudDigitalOcean Cloud = "digitalocean"
	CloudCoreWeave    Cloud = "coreweave"
	CloudKWOK         Cloud = "kwok"
)

// Clouds lists every cloud with an embedded catalog, sorted.
func Clouds() []Cloud {
	return []Cloud{CloudAWS, CloudAzure, CloudCoreWeave, CloudDigitalOcean, CloudGCP, CloudKWOK, CloudLinode}
}

// Architectures of an instance type, as in the kubernetes.io/arch label.
const (
	ArchAMD64 = "amd64"
	ArchARM64 = "arm64"
)

// InstanceType is one machine shape of a cloud, with its nominal capacity
// (what the cloud sells, before any reservation) and on-demand price.
type InstanceType struct {
	// Name is the cloud's name for the type, the value of the
	// node.kubernetes.io/instance-type label (r7gd.8xlarge).
	Name string
	// Family is the group of sizes sharing a shape (r7gd, n2-highmem, Edsv5).
	Family string
	// Size is the part of Name that sets the size within Family (8xlarge);
	// the vCPU count where the cloud's names have no such part.
	Size string
	// CPU is the number of vCPUs.
	CPU resource.Quantity
	// Memory is the nominal memory.
	Memory resource.Quantity
	// Arch is ArchAMD64 or ArchARM64.
	Arch string
	// LocalNVMeGiB is the total local NVMe (or local SSD) disk in GiB, 0
	// when the type has none.
	LocalNVMeGiB int64
	// Pods is how many pods the node's network gives an address to, 0
	// when the cloud sets no per-type limit (on AWS the VPC CNI's
	// ENI-limited pods).
	Pods int64
	// PricePerHour is the on-demand price in USD in the catalog's reference
	// region. It ranks types; it is approximate.
	PricePerHour float64
}

// Catalog is the set of instance types burstpool may choose from on one
// cloud. Types are sorted by Family, then by size (CPU, then memory, then
// price), then by Name. A Catalog is not modified once built: WithOverrides
// returns a new one.
type Catalog struct {
	// Cloud the types belong to.
	Cloud Cloud
	// Version of the data the catalog was built from; it changes whenever
	// a figure does.
	Version string
	// Region the prices are quoted for.
	Region string
	// Types, sorted.
	Types []InstanceType

	index map[string]int
}

//go:embed catalogs/*.yaml
var catalogFiles embed.FS

// catalogFile is the layout of an embedded data file.
type catalogFile struct {
	Cloud    Cloud          `json:"cloud"`
	Version  string         `json:"version"`
	Region   string         `json:"region"`
	Families []familyRecord `json:"families"`
}

type familyRecord struct {
	Family      string       `json:"family"`
	Arch        string       `json:"arch"`
	Description string       `json:"description,omitempty"`
	SpecsSource string       `json:"specsSource"`
	PriceSource string       `json:"priceSource"`
	Types       []typeRecord `json:"types"`
}

type typeRecord struct {
	Name      string             `json:"name"`
	Size      string             `json:"size,omitempty"`
	CPU       resource.Quantity  `json:"cpu"`
	Memory    resource.Quantity  `json:"memory"`
	LocalNVMe *resource.Quantity `json:"localNVMe,omitempty"`
	Pods      int64              `json:"pods,omitempty"`
	Price     float64            `json:"price"`
}

var loaded = sync.OnceValue(func() map[Cloud]loadResult {
	out := map[Cloud]loadResult{}
	for _, c := range Clouds() {
		cat, err := parseCatalog(c)
		out[c] = loadResult{cat: cat, err: err}
	}
	return out
})

type loadResult struct {
	cat *Catalog
	err error
}

// LoadCatalog returns the embedded catalog of a cloud. Each call returns a
// copy the caller may keep; the data files are parsed once per process.
func LoadCatalog(c Cloud) (*Catalog, error) {
	cat, err := SharedCatalog(c)
	if err != nil {
		return nil, err
	}
	return cat.clone(), nil
}

// SharedCatalog returns the embedded catalog of a cloud without copying
// it: the one catalog of the process, which callers may only read, from
// any number of goroutines. Derive, Lookup, Only and WithOverrides only
// read the catalog they are given (the last two return new ones); to
// change a catalog, take LoadCatalog's copy.
func SharedCatalog(c Cloud) (*Catalog, error) {
	r, ok := loaded()[c]
	if !ok {
		return nil, errors.Errorf("no instance catalog for cloud %q; known clouds are %s", c, joinClouds(Clouds()))
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.cat, nil
}

func joinClouds(cs []Cloud) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

func parseCatalog(c Cloud) (*Catalog, error) {
	name := "catalogs/" + string(c) + ".yaml"
	raw, err := catalogFiles.ReadFile(name)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot read instance catalog %s", name)
	}
	var f catalogFile
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		return nil, errors.Wrapf(err, "cannot parse instance catalog %s", name)
	}
	if f.Cloud != c {
		return nil, errors.Errorf("instance catalog %s is for cloud %q, not %q", name, f.Cloud, c)
	}
	cat := &Catalog{Cloud: f.Cloud, Version: f.Version, Region: f.Region}
	for _, fam := range f.Families {
		if fam.SpecsSource == "" || fam.PriceSource == "" {
			return nil, errors.Errorf("instance catalog %s: family %s must name the source of its figures (specsSource, priceSource)", name, fam.Family)
		}
		for _, t := range fam.Types {
			it := InstanceType{
				Name:         t.Name,
				Family:       fam.Family,
				Size:         t.Size,
				CPU:          t.CPU,
				Memory:       t.Memory,
				Arch:         fam.Arch,
				Pods:         t.Pods,
				PricePerHour: t.Price,
			}
			if it.Size == "" {
				it.Size = sizeOf(it.Name, it.Family, it.CPU)
			}
			if t.LocalNVMe != nil {
				it.LocalNVMeGiB = t.LocalNVMe.Value() / gibibyte
			}
			if err := validateType(it); err != nil {
				return nil, errors.Wrapf(err, "instance catalog %s", name)
			}
			cat.Types = append(cat.Types, it)
		}
	}
	if err := cat.build(); err != nil {
		return nil, errors.Wrapf(err, "instance catalog %s", name)
	}
	return cat, nil
}

// sizeOf derives a type's size from its name: what follows the family and
// a separator (r7gd.8xlarge: 8xlarge), else the vCPU count.
func sizeOf(name, family string, cpu resource.Quantity) string {
	if family != "" && strings.HasPrefix(name, family) {
		if s := strings.TrimLeft(name[len(family):], ".-_"); s != "" {
			return s
		}
	}
	return cpu.String()
}

func validateType(it InstanceType) error {
	switch {
	case it.Name == "":
		return errors.New("an instance type has no name")
	case it.Arch != ArchAMD64 && it.Arch != ArchARM64:
		return errors.Errorf("instance type %s: arch must be %s or %s, not %q", it.Name, ArchAMD64, ArchARM64, it.Arch)
	case it.CPU.Sign() <= 0:
		return errors.Errorf("instance type %s: cpu must be positive", it.Name)
	case it.Memory.Sign() <= 0:
		return errors.Errorf("instance type %s: memory must be positive", it.Name)
	case it.PricePerHour < 0:
		return errors.Errorf("instance type %s: price must not be negative", it.Name)
	}
	return nil
}

// build sorts the types and indexes them by name; it fails on a duplicate.
func (c *Catalog) build() error {
	slices.SortFunc(c.Types, compareTypes)
	c.index = make(map[string]int, len(c.Types))
	for i, t := range c.Types {
		if _, dup := c.index[t.Name]; dup {
			return errors.Errorf("instance type %s is listed twice", t.Name)
		}
		c.index[t.Name] = i
	}
	return nil
}

// compareTypes orders types by family, then size, then name.
func compareTypes(a, b InstanceType) int {
	if c := strings.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	return compareSize(a, b)
}

// compareSize orders types by CPU, then memory, then price, then name: the
// order in which "smaller" and "larger" are meant throughout the package.
func compareSize(a, b InstanceType) int {
	if c := a.CPU.Cmp(b.CPU); c != 0 {
		return c
	}
	if c := a.Memory.Cmp(b.Memory); c != 0 {
		return c
	}
	if a.PricePerHour != b.PricePerHour {
		if a.PricePerHour < b.PricePerHour {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

func (c *Catalog) clone() *Catalog {
	out := &Catalog{Cloud: c.Cloud, Version: c.Version, Region: c.Region, Types: make([]InstanceType, len(c.Types))}
	for i, t := range c.Types {
		t.CPU = t.CPU.DeepCopy()
		t.Memory = t.Memory.DeepCopy()
		out.Types[i] = t
	}
	out.index = maps.Clone(c.index)
	return out
}

// WithOverrides returns a new catalog holding c's types plus extra: an entry
// whose Name is already in c replaces it, any other is added (on-premises
// machines, types newer than the catalog). An entry without Family keeps the
// replaced type's family, or is its own family; one without Size gets the
// part of its name after the family, or its vCPU count. Entries that cannot
// be sized (no name, no CPU or memory, an unknown arch) are skipped, the
// last of two entries with one name wins, and c is left unchanged.
// The result's Version records that overrides were applied.
func (c *Catalog) WithOverrides(extra []InstanceType) *Catalog {
	out := c.clone()
	if out.index == nil {
		out.index = map[string]int{}
		for i, t := range out.Types {
			out.index[t.Name] = i
		}
	}
	applied := 0
	for _, t := range extra {
		if prev, ok := out.Lookup(t.Name); ok && t.Family == "" {
			t.Family = prev.Family
		}
		if t.Family == "" {
			t.Family = t.Name
		}
		if t.Size == "" {
			t.Size = sizeOf(t.Name, t.Family, t.CPU)
		}
		if validateType(t) != nil {
			continue
		}
		t.CPU = t.CPU.DeepCopy()
		t.Memory = t.Memory.DeepCopy()
		if i, ok := out.index[t.Name]; ok {
			out.Types[i] = t
		} else {
			out.index[t.Name] = len(out.Types)
			out.Types = append(out.Types, t)
		}
		applied++
	}
	if applied > 0 {
		out.Version = fmt.Sprintf("%s+%d overrides", c.Version, applied)
	}
	// Names are unique by construction, so build cannot fail.
	_ = out.build()
	return out
}

// Only returns a new catalog holding the types of c that keep accepts,
// for example the families a platform allows; c is left unchanged.
func (c *Catalog) Only(keep func(InstanceType) bool) *Catalog {
	out := &Catalog{Cloud: c.Cloud, Version: c.Version, Region: c.Region}
	for _, t := range c.clone().Types {
		if keep(t) {
			out.Types = append(out.Types, t)
		}
	}
	// c's names are unique, so build cannot fail.
	_ = out.build()
	return out
}

// Lookup returns the type named name.
func (c *Catalog) Lookup(name string) (InstanceType, bool) {
	if c == nil {
		return InstanceType{}, false
	}
	if c.index != nil {
		i, ok := c.index[name]
		if !ok || i >= len(c.Types) || c.Types[i].Name != name {
			return c.scan(name)
		}
		return c.Types[i], true
	}
	return c.scan(name)
}

func (c *Catalog) scan(name string) (InstanceType, bool) {
	for _, t := range c.Types {
		if t.Name == name {
			return t, true
		}
	}
	return InstanceType{}, false
}

// Families returns the names of the catalog's families, sorted.
func (c *Catalog) Families() []string {
	var out []string
	for _, t := range c.Types {
		if len(out) == 0 || out[len(out)-1] != t.Family {
			out = append(out, t.Family)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Family returns the types of one family, smallest first.
func (c *Catalog) Family(family string) []InstanceType {
	var out []InstanceType
	for _, t := range c.Types {
		if t.Family == family {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, compareSize)
	return out
}
