package sizing

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pkg/errors"
	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultMaxSpotTypes caps the ranked spot set when Input.MaxSpotTypes is
// not set.
const DefaultMaxSpotTypes = 10

// Field paths that Derive's messages name.
const (
	FieldInstanceType     = "spec.instanceConfig.instanceType"
	FieldInstanceFamily   = "spec.instanceConfig.instanceFamily"
	FieldAutoUpgrade      = "spec.instanceConfig.autoUpgrade"
	FieldInherit          = "spec.inheritNodeConfigFrom"
	FieldExecutorsPerNode = "spec.executorsPerNode"
)

// Executor is the per-executor request of one attached QueryService.
type Executor struct {
	// QueryService is "namespace/name".
	QueryService string
	// CPU and Memory are one executor pod's effective requests.
	CPU, Memory resource.Quantity
}

// Inherited names the QueryService a pool takes its instance type from and
// the type its regular nodes run, as gathered by the caller.
type Inherited struct {
	// QueryService is "namespace/name".
	QueryService string
	// InstanceType is that QueryService's instance type, "" while unknown.
	InstanceType string
}

// Input is everything Derive needs, gathered by the caller.
type Input struct {
	// Cloud the pool runs on.
	Cloud Cloud
	// Catalog to choose from; LoadCatalog(Cloud) when nil.
	Catalog *Catalog

	// InstanceType pins the type (spec.instanceConfig.instanceType).
	InstanceType string
	// InstanceFamily picks sizes from one family.
	InstanceFamily string
	// AutoUpgrade lets the pool move to a larger type when a larger
	// executor attaches.
	AutoUpgrade bool
	// Spot asks for a ranked set of types to diversify spot capacity.
	Spot bool
	// Inherit takes the type of a QueryService (spec.inheritNodeConfigFrom).
	Inherit *Inherited

	// ExecutorsPerNode is how many executors share one node; 1 when < 1.
	ExecutorsPerNode int32
	// Executors are the attached QueryServices' executor requests.
	Executors []Executor

	// Previous is the type derived last time (from status), "" if none.
	Previous string
	// ExecutorsHaveRun locks the pool's type: once an executor has run on
	// the pool, Previous is kept unless AutoUpgrade moves it upward. Before
	// that, a family or catalog pool follows the executors attached now.
	ExecutorsHaveRun bool

	// Overhead is the pool's own per-node overhead.
	Overhead Overhead
	// Arch is the preferred architecture, "" for any. Types of this arch
	// are chosen from when the family (or catalog) has any.
	Arch string
	// MaxSpotTypes caps the ranked spot set; DefaultMaxSpotTypes when < 1.
	MaxSpotTypes int
	// SpotNeighbours lets the spot set take types of neighbouring
	// generations of the chosen family (r6gd and r8gd for r7gd).
	SpotNeighbours bool
	// AllowMetal lets bare-metal types be chosen or offered.
	AllowMetal bool
	// PinnedStandIns lets a pinned type (InstanceType, or the inherited
	// one) take spot stand-ins of its own CPU and memory. Off, a pinned
	// type is offered alone, spot or not: its owner chose it for its
	// price, its disks or its processor.
	PinnedStandIns bool
}

// Compatibility says whether one attached executor fits the chosen type.
type Compatibility struct {
	// QueryService is "namespace/name".
	QueryService string
	// Compatible is true when ExecutorsPerNode executors fit one node.
	Compatible bool
	// RequiredCPU and RequiredMemory are the per-executor requests.
	RequiredCPU, RequiredMemory resource.Quantity
	// InstanceType is the pool's chosen type.
	InstanceType string
	// Message says, when not compatible, what the executor needs, what the
	// pool offers and what to change; "" when compatible.
	Message string
}

// Result is the instance type Derive chose and why.
type Result struct {
	// InstanceType is the chosen type.
	InstanceType string
	// SpotTypes is, when Spot is asked, the types Karpenter may launch:
	// the chosen type's arch, each holding as many executors of every
	// compatible executor as InstanceType, with local NVMe when the chosen
	// type has it, at least SpotMinTypes wherever the catalog has them
	// (of the pinned type's CPU and memory when the type is pinned,
	// explicitly or inherited, and only with PinnedStandIns; without it a
	// pinned type is the only one), at most MaxSpotTypes, InstanceType
	// first. Nil otherwise.
	SpotTypes []string
	// DerivedFrom says where the type came from, for status.derivedFrom.
	DerivedFrom string
	// Arch is the chosen type's architecture.
	Arch string
	// Allocatable is what executors can request on one node of the chosen
	// type (see Allocatable).
	Allocatable Resources
	// Compatibility has one entry per executor, sorted by QueryService
	// (then by CPU and memory requests).
	Compatibility []Compatibility
	// Upgraded is true when the chosen type is larger than Previous.
	Upgraded bool
	// Kept says why Previous was kept rather than the type the attached
	// executors alone would get; "" when it was not.
	Kept string
	// PerNode is how many executors of the largest compatible executor
	// (the largest request per resource) one node of InstanceType holds;
	// 0 when none is compatible. It equals ExecutorsPerNode whenever a
	// candidate holds exactly that many and Previous was not kept.
	PerNode int64
	// Offered is every type the pool's nodes may use, InstanceType first,
	// with why each is there. Spot stand-ins hold PerNode executors too.
	Offered []Offered
	// LargestOffered is the largest raw CPU and the largest raw memory
	// among InstanceType and SpotTypes, for NodePool limits.
	LargestOffered Resources
	// Kubelet is what the model assumes of the kubelet of nodes of the
	// offered types (KubeletFor), for the NodeClass to set.
	Kubelet Kubelet
	// LocalNVMe tells whether InstanceType has instance-store NVMe disks.
	LocalNVMe bool
}

// Offered is one type a pool's nodes may use.
type Offered struct {
	Name string
	// PerNode is how many executors of the largest compatible executor
	// one node holds.
	PerNode int64
	// Reason says why the type is offered, with its figures.
	Reason string
}

// need is a per-executor request in milli-CPU, bytes and pods (1 for an
// executor), or what a node has left of them.
type need struct{ cpu, mem, pods int64 }

func (n need) max(o need) need {
	return need{cpu: max(n.cpu, o.cpu), mem: max(n.mem, o.mem), pods: max(n.pods, o.pods)}
}

// fits reports whether per executors of need n fit in a: their CPU, their
// memory, and as many pods as the node has left.
func fits(per int64, n, a need) bool {
	return n.cpu <= a.cpu/per && n.mem <= a.mem/per && n.pods*per <= a.pods
}

// executor is one attached executor, pointer-free so sorting is cheap.
type executor struct {
	src  int // index in Input.Executors
	need need
}

// deriver holds one Derive call's working state.
type deriver struct {
	in    Input
	cat   *Catalog
	per   int64
	nom   []need // nominal capacity of each catalog type, by index
	alloc []need // allocatable of each catalog type, by index
	execs []executor
}

// Derive chooses a pool's instance type. The rules, first match wins:
//
//   - InstanceType pins the type; executors that do not fit are
//     incompatible.
//   - Inherit pins the inherited QueryService's type, the same way.
//   - InstanceFamily picks the smallest size of the family whose
//     allocatable holds ExecutorsPerNode of the largest attached executor
//     (per resource); executors no size holds are incompatible.
//   - Otherwise the cheapest type of the catalog that holds them is picked.
//
// Sizing from a family or the catalog then weighs Previous: when Previous
// already holds every executor the new type would, it is kept while
// ExecutorsRunning (and left for the new type otherwise); when it does not,
// the pool moves to the new type only with AutoUpgrade, and without it
// keeps Previous and reports the executors that do not fit as incompatible.
// Previous outside the family (or preferred arch) is not kept: changing the
// family is a request to move.
//
// Derive returns an error only when no type can be chosen: an unknown
// pinned or inherited type, an unknown family, an empty catalog, or nothing
// to size from. The error names the field and what to fix. Output is
// deterministic.
func Derive(in Input) (Result, error) {
	d, err := newDeriver(in)
	if err != nil {
		return Result{}, err
	}
	res, err := d.choose()
	if err != nil {
		return Result{}, err
	}
	d.describeOffered(&res)
	return res, nil
}

// describeOffered sets what the NodePool and NodeClass need of the offered
// types (InstanceType and SpotTypes): the largest of their sizes, the
// kubelet they share and whether InstanceType has local NVMe.
func (d *deriver) describeOffered(res *Result) {
	var offered []InstanceType
	for _, name := range append([]string{res.InstanceType}, res.SpotTypes...) {
		i, ok := d.index(name)
		if !ok {
			continue
		}
		it := d.cat.Types[i]
		offered = append(offered, it)
		if it.CPU.Cmp(res.LargestOffered.CPU) > 0 {
			res.LargestOffered.CPU = it.CPU.DeepCopy()
		}
		if it.Memory.Cmp(res.LargestOffered.Memory) > 0 {
			res.LargestOffered.Memory = it.Memory.DeepCopy()
		}
		if name == res.InstanceType {
			res.LocalNVMe = it.LocalNVMeGiB > 0
		}
	}
	res.Kubelet = KubeletFor(d.in.Cloud, offered...)
}

// choose applies Derive's rules.
func (d *deriver) choose() (Result, error) {
	in := d.in
	switch {
	case in.InstanceType != "":
		i, ok := d.index(in.InstanceType)
		if !ok {
			return Result{}, d.unknownType(FieldInstanceType, in.InstanceType)
		}
		return d.pinned(i, FieldInstanceType, "choose a larger "+FieldInstanceType+" or lower "+FieldExecutorsPerNode), nil
	case in.Inherit != nil:
		qs := in.Inherit.QueryService
		if qs == "" {
			return Result{}, errors.Errorf("%s: name the QueryService to inherit the instance type from", FieldInherit)
		}
		if in.Inherit.InstanceType == "" {
			return Result{}, errors.Errorf("%s: QueryService %s has no instance type yet; wait for its regular nodes, or set %s or %s", FieldInherit, qs, FieldInstanceType, FieldInstanceFamily)
		}
		i, ok := d.index(in.Inherit.InstanceType)
		if !ok {
			return Result{}, d.unknownType(FieldInherit+" (QueryService "+qs+")", in.Inherit.InstanceType)
		}
		return d.pinned(i, "QueryService/"+qs, "the type inherited from QueryService "+qs+" is too small; set "+FieldInstanceType+" or "+FieldInstanceFamily+" instead"), nil
	case in.InstanceFamily != "":
		cands := d.family(in.InstanceFamily)
		if len(cands) == 0 {
			return Result{}, errors.Errorf("%s: %q is not a family of the %s instance catalog (version %s); use one of %s, or add its types as catalog overrides",
				FieldInstanceFamily, in.InstanceFamily, d.cat.Cloud, d.cat.Version, strings.Join(d.cat.Families(), ", "))
		}
		return d.sized(d.noMetal(d.preferArch(cands)), "instanceFamily "+in.InstanceFamily), nil
	case len(in.Executors) > 0 || d.known(in.Previous):
		return d.sized(d.noMetal(d.preferArch(d.cheapestFirst())), "cheapest "+string(d.cat.Cloud)+" type"), nil
	default:
		return Result{}, errors.Errorf("spec.instanceConfig: nothing to size the pool from; set %s or %s, set %s, or attach a QueryService",
			FieldInstanceType, FieldInstanceFamily, FieldInherit)
	}
}

func newDeriver(in Input) (*deriver, error) {
	cat := in.Catalog
	if cat == nil {
		var err error
		if cat, err = LoadCatalog(in.Cloud); err != nil {
			return nil, errors.Wrap(err, "cannot size the pool")
		}
	}
	if len(cat.Types) == 0 {
		return nil, errors.Errorf("the %s instance catalog has no instance types; add types as catalog overrides", cat.Cloud)
	}
	cloud := in.Cloud
	if cloud == "" {
		cloud = cat.Cloud
	}
	d := &deriver{in: in, cat: cat, per: max(int64(in.ExecutorsPerNode), 1)}
	dsCPU, dsMem := in.Overhead.sum()
	vmMemory := in.Overhead.vmMemory(cloud)
	d.nom = make([]need, len(cat.Types))
	d.alloc = make([]need, len(cat.Types))
	for i, t := range cat.Types {
		d.nom[i] = need{cpu: milli(t.CPU), mem: value(t.Memory), pods: maxPods(cloud, &cat.Types[i])}
		c, m := allocatable(cloud, &cat.Types[i], dsCPU, dsMem, vmMemory)
		// The node's DaemonSet pods take pods as well as resources.
		d.alloc[i] = need{cpu: c, mem: m, pods: max(d.nom[i].pods-int64(len(in.Overhead.DaemonSets)), 0)}
	}
	d.execs = make([]executor, len(in.Executors))
	for i, e := range in.Executors {
		d.execs[i] = executor{src: i, need: need{cpu: milli(e.CPU), mem: value(e.Memory), pods: 1}}
	}
	slices.SortFunc(d.execs, func(a, b executor) int {
		return cmp.Or(strings.Compare(in.Executors[a.src].QueryService, in.Executors[b.src].QueryService),
			cmp.Compare(a.need.cpu, b.need.cpu), cmp.Compare(a.need.mem, b.need.mem), cmp.Compare(a.src, b.src))
	})
	return d, nil
}

// qs is an executor's QueryService.
func (d *deriver) qs(e executor) string { return d.in.Executors[e.src].QueryService }

// compareSize is the package's compareSize on catalog indices, from the
// precomputed capacities.
func (d *deriver) compareSize(a, b int) int {
	ta, tb := &d.cat.Types[a], &d.cat.Types[b]
	return cmp.Or(cmp.Compare(d.nom[a].cpu, d.nom[b].cpu), cmp.Compare(d.nom[a].mem, d.nom[b].mem),
		cmp.Compare(ta.PricePerHour, tb.PricePerHour), strings.Compare(ta.Name, tb.Name))
}

func (d *deriver) index(name string) (int, bool) {
	if d.cat.index != nil {
		if i, ok := d.cat.index[name]; ok && i < len(d.cat.Types) && d.cat.Types[i].Name == name {
			return i, true
		}
	}
	for i, t := range d.cat.Types {
		if t.Name == name {
			return i, true
		}
	}
	return 0, false
}

func (d *deriver) unknownType(field, name string) error {
	hint := "choose a type the catalog lists"
	for _, f := range d.cat.Families() {
		if strings.HasPrefix(name, f) && len(name) > len(f) && strings.ContainsAny(name[len(f):len(f)+1], ".-_") {
			sizes := d.family(f)
			names := make([]string, len(sizes))
			for i, s := range sizes {
				names[i] = d.cat.Types[s].Name
			}
			hint = "the " + f + " sizes are " + strings.Join(names, ", ")
		}
	}
	return errors.Errorf("%s: %q is not in the %s instance catalog (version %s); %s, or add it as a catalog override",
		field, name, d.cat.Cloud, d.cat.Version, hint)
}

// family returns the indices of a family's types, smallest first (the
// catalog's order).
func (d *deriver) family(f string) []int {
	var out []int
	for i, t := range d.cat.Types {
		if t.Family == f {
			out = append(out, i)
		}
	}
	slices.SortFunc(out, d.compareSize)
	return out
}

// cheapestFirst returns every type's index, cheapest first, then smallest.
func (d *deriver) cheapestFirst() []int {
	out := make([]int, len(d.cat.Types))
	for i := range out {
		out[i] = i
	}
	slices.SortFunc(out, func(a, b int) int {
		return cmp.Or(cmp.Compare(d.cat.Types[a].PricePerHour, d.cat.Types[b].PricePerHour), d.compareSize(a, b))
	})
	return out
}

// known tells whether name is a catalog type.
func (d *deriver) known(name string) bool {
	_, ok := d.index(name)
	return name != "" && ok
}

// noMetal drops bare-metal candidates unless AllowMetal, or the previous
// type is one, or only metal is left.
func (d *deriver) noMetal(cands []int) []int {
	if d.in.AllowMetal {
		return cands
	}
	out := make([]int, 0, len(cands))
	for _, i := range cands {
		if !isMetal(d.cat.Types[i]) || d.cat.Types[i].Name == d.in.Previous {
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		return cands
	}
	return out
}

// preferArch keeps the candidates of the preferred arch, if there are any.
func (d *deriver) preferArch(cands []int) []int {
	if d.in.Arch == "" {
		return cands
	}
	var out []int
	for _, i := range cands {
		if d.cat.Types[i].Arch == d.in.Arch {
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		return cands
	}
	return out
}

// pinned is the result for a type the user chose, directly or inherited.
func (d *deriver) pinned(i int, from, advice string) Result {
	r := d.result(i, from)
	var req need
	for _, e := range d.execs {
		c := d.compat(e, i)
		switch {
		case e.need.cpu == 0 || e.need.mem == 0:
			c.Compatible, c.Message = false, noRequests(d.in.Executors[e.src])
		case !c.Compatible:
			c.Message = fmt.Sprintf("%s; %s allocatable is %s; %s", d.needs(e), d.cat.Types[i].Name, d.show(d.alloc[i]), advice)
		default:
			req = req.max(e.need)
		}
		r.Compatibility = append(r.Compatibility, c)
	}
	r.PerNode = d.slots(req, i)
	r.Offered = []Offered{{Name: d.cat.Types[i].Name, PerNode: r.PerNode, Reason: d.chosenReason(i, req, from)}}
	switch {
	case d.in.Spot && d.in.PinnedStandIns:
		// Where the platform allows stand-ins, a pinned type stands in
		// only with types of its own CPU and memory: the pool keeps the
		// shape its owner chose.
		r.offerSpot(d.spot(i, req, true))
	case d.in.Spot:
		r.offerSpot(nil) // the pinned type alone: one spot market
	}
	return r
}

func (d *deriver) result(i int, from string) Result {
	t := d.cat.Types[i]
	r := Result{
		InstanceType: t.Name,
		DerivedFrom:  from,
		Arch:         t.Arch,
		Allocatable: Resources{
			CPU:    *resource.NewMilliQuantity(d.alloc[i].cpu, resource.DecimalSI),
			Memory: *resource.NewQuantity(d.alloc[i].mem, resource.BinarySI),
		},
	}
	if len(d.execs) > 0 {
		r.Compatibility = make([]Compatibility, 0, len(d.execs))
	}
	if p, ok := d.index(d.in.Previous); ok && p != i {
		r.Upgraded = d.compareSize(i, p) > 0
	}
	return r
}

func (d *deriver) compat(e executor, i int) Compatibility {
	src := d.in.Executors[e.src]
	return Compatibility{
		QueryService:   src.QueryService,
		Compatible:     fits(d.per, e.need, d.alloc[i]),
		RequiredCPU:    src.CPU.DeepCopy(),
		RequiredMemory: src.Memory.DeepCopy(),
		InstanceType:   d.cat.Types[i].Name,
	}
}

// sized picks from candidates (in preference order) the first that holds
// the attached executors, then weighs Previous.
func (d *deriver) sized(cands []int, what string) Result {
	// The frontier: candidates no other candidate beats in both CPU and
	// memory. An executor fits some candidate iff it fits one of these.
	frontier := d.frontier(cands)
	fitsAny := make([]bool, len(d.execs))
	var req need
	holdable := 0
	for k, e := range d.execs {
		if e.need.cpu == 0 || e.need.mem == 0 {
			continue
		}
		for _, f := range frontier {
			if fits(d.per, e.need, d.alloc[f]) {
				fitsAny[k] = true
				req = req.max(e.need)
				holdable++
				break
			}
		}
	}
	chosen := d.first(cands, req)
	if chosen < 0 {
		// No candidate holds every holdable executor (their shapes pull
		// apart): take the candidate holding the most, then the first
		// candidate that holds those.
		best, bestN := cands[0], -1
		for _, c := range cands {
			n := 0
			for k, e := range d.execs {
				if fitsAny[k] && fits(d.per, e.need, d.alloc[c]) {
					n++
				}
			}
			if n > bestN {
				best, bestN = c, n
			}
		}
		req = need{}
		for k, e := range d.execs {
			if fitsAny[k] && fits(d.per, e.need, d.alloc[best]) {
				req = req.max(e.need)
			}
		}
		chosen = d.first(cands, req)
	}
	sized := chosen

	from := what + d.drivers(cands, chosen, fitsAny, holdable)
	chosen, kept, keptForUpgrade := d.weighPrevious(cands, chosen, req, holdable)
	if kept != "" {
		from = "previous " + d.in.Previous + " kept: " + kept
	}

	r := d.result(chosen, from)
	r.Kept = kept
	largest := d.largest(cands)
	var compatReq need
	for k, e := range d.execs {
		c := d.compat(e, chosen)
		switch {
		case e.need.cpu == 0 || e.need.mem == 0:
			c.Compatible = false
			c.Message = noRequests(d.in.Executors[e.src])
		case c.Compatible:
			compatReq = compatReq.max(e.need)
		case !fitsAny[k] && d.in.InstanceFamily != "":
			c.Message = fmt.Sprintf("%s; largest %s (%s) allocatable is %s; choose a larger %s or lower %s or the executor's requests",
				d.needs(e), d.in.InstanceFamily, d.cat.Types[largest].Name, d.show(d.alloc[largest]), FieldInstanceFamily, FieldExecutorsPerNode)
		case !fitsAny[k]:
			c.Message = fmt.Sprintf("%s; no %s instance type holds that, the largest (%s) allocatable is %s; lower %s or the executor's requests, or add a larger type as a catalog override",
				d.needs(e), d.cat.Cloud, d.cat.Types[largest].Name, d.show(d.alloc[largest]), FieldExecutorsPerNode)
		case keptForUpgrade:
			c.Message = fmt.Sprintf("%s; the pool keeps %s (allocatable %s) because executors have run on it and %s is off; set it to true to move the pool up to %s",
				d.needs(e), d.cat.Types[chosen].Name, d.show(d.alloc[chosen]), FieldAutoUpgrade, d.cat.Types[sized].Name)
		default:
			c.Message = fmt.Sprintf("%s; %s, sized for the other QueryServices, allocatable is %s; give this QueryService its own pool or set %s",
				d.needs(e), d.cat.Types[chosen].Name, d.show(d.alloc[chosen]), FieldInstanceType)
		}
		r.Compatibility = append(r.Compatibility, c)
	}
	r.PerNode = d.slots(compatReq, chosen)
	r.Offered = []Offered{{Name: d.cat.Types[chosen].Name, PerNode: r.PerNode, Reason: d.chosenReason(chosen, compatReq, from)}}
	if d.in.Spot {
		r.offerSpot(d.spot(chosen, compatReq, false))
	}
	return r
}

// offerSpot adds the spot stand-ins to r's offered types and names them
// all in SpotTypes.
func (r *Result) offerSpot(standIns []Offered) {
	r.Offered = append(r.Offered, standIns...)
	r.SpotTypes = make([]string, len(r.Offered))
	for i, o := range r.Offered {
		r.SpotTypes[i] = o.Name
	}
}

// weighPrevious applies the locking rules to the type the attached
// executors alone would get: it returns the type the pool takes, why
// Previous was kept ("" when it was not), and whether an executor does not
// fit only because autoUpgrade is off.
//
//   - Nothing attached, or nothing attached fits: Previous is kept.
//   - No executor has run yet: the pool follows the attached executors.
//   - Executors have run: Previous is kept when it holds them all; else,
//     with autoUpgrade, the pool moves to the first candidate that holds
//     them and is no smaller than Previous in CPU and memory; without
//     autoUpgrade (or with no such candidate) Previous is kept.
//
// Previous outside the candidates (another family or arch) is not kept:
// changing the family is a request to move.
func (d *deriver) weighPrevious(cands []int, chosen int, req need, holdable int) (int, string, bool) {
	if d.in.Previous == "" {
		return chosen, "", false
	}
	p := slices.IndexFunc(cands, func(c int) bool { return d.cat.Types[c].Name == d.in.Previous })
	if p < 0 || cands[p] == chosen {
		return chosen, "", false
	}
	prev := cands[p]
	switch {
	case len(d.execs) == 0:
		return prev, "no QueryService is attached", false
	case holdable == 0:
		return prev, "no attached QueryService fits any candidate type", false
	case !d.in.ExecutorsHaveRun:
		return chosen, "", false
	case fits(d.per, req, d.alloc[prev]):
		return prev, "executors have run on it and it holds every compatible QueryService", false
	case !d.in.AutoUpgrade:
		return prev, "executors have run on it and " + FieldAutoUpgrade + " is off", true
	}
	if d.alloc[chosen].cpu >= d.alloc[prev].cpu && d.alloc[chosen].mem >= d.alloc[prev].mem {
		return chosen, "", false
	}
	for _, c := range cands {
		if fits(d.per, req, d.alloc[c]) && d.alloc[c].cpu >= d.alloc[prev].cpu && d.alloc[c].mem >= d.alloc[prev].mem {
			return c, "", false
		}
	}
	return prev, "executors have run on it and no candidate type larger than it holds every compatible QueryService", true
}

// noRequests is the message for an executor without CPU or memory
// requests, which cannot be sized for.
func noRequests(e Executor) string {
	return "the QueryService's executor sets no CPU or memory request, so the pool cannot tell how many fit a node: set spec.executor.resources.cpu and spec.executor.resources.memory on QueryService " + e.QueryService
}

// first returns the first candidate that holds exactly per executors of
// req, else the first that holds at least per, else -1.
func (d *deriver) first(cands []int, req need) int {
	fallback := -1
	for _, c := range cands {
		if !fits(d.per, req, d.alloc[c]) {
			continue
		}
		if d.slots(req, c) == d.per {
			return c
		}
		if fallback < 0 {
			fallback = c
		}
	}
	return fallback
}

// slots is how many executors of req one node of type i holds; 0 when req
// is empty.
func (d *deriver) slots(req need, i int) int64 {
	if req.cpu <= 0 && req.mem <= 0 {
		return 0
	}
	n := limit
	if req.cpu > 0 {
		n = min(n, d.alloc[i].cpu/req.cpu)
	}
	if req.mem > 0 {
		n = min(n, d.alloc[i].mem/req.mem)
	}
	if req.pods > 0 {
		n = min(n, d.alloc[i].pods/req.pods)
	}
	return n
}

func (d *deriver) frontier(cands []int) []int {
	byCPU := slices.Clone(cands)
	slices.SortFunc(byCPU, func(a, b int) int {
		return cmp.Or(cmp.Compare(d.alloc[b].cpu, d.alloc[a].cpu), cmp.Compare(d.alloc[b].mem, d.alloc[a].mem))
	})
	var out []int
	bestMem := int64(-1)
	for _, c := range byCPU {
		if d.alloc[c].mem > bestMem {
			out = append(out, c)
			bestMem = d.alloc[c].mem
		}
	}
	return out
}

// largest is the first candidate with the most CPU, then memory (so
// r7gd.16xlarge rather than r7gd.metal).
func (d *deriver) largest(cands []int) int {
	l := cands[0]
	for _, c := range cands[1:] {
		if cmp.Or(cmp.Compare(d.nom[c].cpu, d.nom[l].cpu), cmp.Compare(d.nom[c].mem, d.nom[l].mem)) > 0 {
			l = c
		}
	}
	return l
}

// drivers says what set the size, as a suffix for DerivedFrom: the
// executor with the largest CPU request or the one with the largest memory
// request (the first by QueryService among equals), whichever alone needs
// the chosen candidate, or both when only together they need it.
func (d *deriver) drivers(cands []int, chosen int, fitsAny []bool, holdable int) string {
	if len(d.execs) == 0 {
		return ": no QueryService attached, smallest size"
	}
	byCPU, byMem := -1, -1
	for k, e := range d.execs {
		if !fitsAny[k] || !fits(d.per, e.need, d.alloc[chosen]) {
			continue
		}
		if byCPU < 0 || e.need.cpu > d.execs[byCPU].need.cpu {
			byCPU = k
		}
		if byMem < 0 || e.need.mem > d.execs[byMem].need.mem {
			byMem = k
		}
	}
	if holdable == 0 || byCPU < 0 {
		return ": no attached QueryService fits, smallest size"
	}
	rank := func(k int) int {
		for r, c := range cands {
			if fits(d.per, d.execs[k].need, d.alloc[c]) {
				return r
			}
		}
		return len(cands)
	}
	rc, rm := rank(byCPU), rank(byMem)
	qc, qm := d.qs(d.execs[byCPU]), d.qs(d.execs[byMem])
	at := slices.Index(cands, chosen)
	switch {
	case qc == qm:
		return " sized for QueryService/" + qc
	case rc == at && rm == at:
		return " sized for QueryService/" + min(qc, qm)
	case rc == at:
		return " sized for QueryService/" + qc
	case rm == at:
		return " sized for QueryService/" + qm
	default:
		return " sized for QueryService/" + qc + " (CPU) and QueryService/" + qm + " (memory)"
	}
}

// chosenReason says why the chosen type is in the offered set.
func (d *deriver) chosenReason(i int, req need, from string) string {
	if req.cpu == 0 && req.mem == 0 {
		return "chosen (" + from + ")"
	}
	return fmt.Sprintf("chosen (%s); allocatable %s holds %d of the largest compatible executor (%s CPU / %s)",
		from, d.show(d.alloc[i]), d.slots(req, i), FormatCPU(req.cpu), FormatMemory(req.mem))
}

// isMetal tells a bare-metal type (r7gd.metal, m7i.metal-24xl).
func isMetal(t InstanceType) bool {
	return strings.Contains(t.Size, "metal") || strings.Contains(t.Name, ".metal")
}

// familyParts splits a family name into its class, generation and
// attributes (r7gd: r, 7, gd; n2-highmem: n, 2, -highmem); ok is false
// for names of another pattern.
func familyParts(f string) (class, gen, attrs string, ok bool) {
	i := strings.IndexFunc(f, func(r rune) bool { return r >= '0' && r <= '9' })
	if i <= 0 {
		return "", "", "", false
	}
	j := i
	for j < len(f) && f[j] >= '0' && f[j] <= '9' {
		j++
	}
	return f[:i], f[i:j], f[j:], true
}

// neighbours tells whether family f is a neighbouring generation of family
// g: the same class and attributes, another generation (r6gd and r7gd).
func neighbours(f, g string) bool {
	if f == g {
		return true
	}
	cf, _, af, ok1 := familyParts(f)
	cg, _, ag, ok2 := familyParts(g)
	return ok1 && ok2 && cf == cg && af == ag
}

// SpotMinTypes is how many types a spot set holds wherever the catalog
// has them: below it, spot widens the set to neighbouring generations,
// then to other families, so one type's spot market running dry does not
// stop the pool (Karpenter docs, concepts/nodepools: "allow Karpenter to
// provision as many distinct instance types as possible").
const SpotMinTypes = 3

// Spot stand-in tiers, in the order spot takes them.
const (
	tierFamily = iota
	tierNeighbour
	tierOther
)

// spot returns the types that can stand in for chosen on spot capacity,
// each with why: of the chosen type's arch, with local NVMe when it has
// it, not bare metal unless AllowMetal (or chosen is), holding exactly as
// many executors of req as chosen does, so a node of any of them adds the
// same executor slots, and, when sameShape (a pinned type), of chosen's
// CPU and memory. They come from chosen's family; then, when that gives
// fewer than SpotMinTypes with chosen (or SpotNeighbours asks for them
// always), from neighbouring generations; then, still fewer, from other
// families (unless InstanceFamily names one). Cheapest first within each;
// at most MaxSpotTypes with chosen (which the caller puts first).
func (d *deriver) spot(chosen int, req need, sameShape bool) []Offered {
	ct := d.cat.Types[chosen]
	per := d.slots(req, chosen)
	metalOK := d.in.AllowMetal || isMetal(ct)
	tiers := make([][]int, tierOther+1)
	for i, t := range d.cat.Types {
		if i == chosen || t.Arch != ct.Arch || (ct.LocalNVMeGiB > 0 && t.LocalNVMeGiB == 0) || (!metalOK && isMetal(t)) {
			continue
		}
		if d.slots(req, i) != per || ((per == 0 || sameShape) && d.compareShape(i, chosen) != 0) {
			continue
		}
		tier := tierOther
		switch {
		case t.Family == ct.Family:
			tier = tierFamily
		case neighbours(t.Family, ct.Family):
			tier = tierNeighbour
		case d.in.InstanceFamily != "":
			continue // the owner chose a family: its generations only
		}
		tiers[tier] = append(tiers[tier], i)
	}
	var rs []int
	for tier, ts := range tiers {
		forced := tier == tierNeighbour && d.in.SpotNeighbours
		if tier != tierFamily && !forced && len(rs)+1 >= SpotMinTypes {
			continue
		}
		slices.SortFunc(ts, func(a, b int) int {
			return cmp.Or(cmp.Compare(d.cat.Types[a].PricePerHour, d.cat.Types[b].PricePerHour), d.compareSize(a, b))
		})
		rs = append(rs, ts...)
	}
	limitN := d.in.MaxSpotTypes
	if limitN < 1 {
		limitN = DefaultMaxSpotTypes
	}
	rs = rs[:min(limitN-1, len(rs))]
	out := make([]Offered, 0, len(rs))
	for _, i := range rs {
		t := d.cat.Types[i]
		why := "same family"
		switch {
		case t.Family == ct.Family:
		case neighbours(t.Family, ct.Family):
			why = "neighbouring generation " + t.Family
		default:
			why = "family " + t.Family
		}
		reason := fmt.Sprintf("spot stand-in: %s, %s", why, t.Arch)
		if per > 0 {
			reason += fmt.Sprintf(", allocatable %s holds %d like %s", d.show(d.alloc[i]), per, ct.Name)
		}
		if per == 0 || sameShape {
			reason += ", same CPU and memory as " + ct.Name
		}
		out = append(out, Offered{Name: t.Name, PerNode: per, Reason: reason})
	}
	return out
}

// compareShape compares the nominal CPU and memory of two types.
func (d *deriver) compareShape(a, b int) int {
	return cmp.Or(cmp.Compare(d.nom[a].cpu, d.nom[b].cpu), cmp.Compare(d.nom[a].mem, d.nom[b].mem))
}

// needs describes what an executor asks of one node.
func (d *deriver) needs(e executor) string {
	src := d.in.Executors[e.src]
	return fmt.Sprintf("executor needs %s CPU / %s x %d per node", src.CPU.String(), src.Memory.String(), d.per)
}

// show describes allocatable CPU and memory, rounded down, and the pods
// the node has left when they are fewer than ExecutorsPerNode.
func (d *deriver) show(a need) string {
	s := FormatCPU(a.cpu) + " CPU / " + FormatMemory(a.mem)
	if a.pods < d.per {
		s += fmt.Sprintf(" / %d pods beside its DaemonSets", a.pods)
	}
	return s
}

// FormatCPU writes milli-CPU as cores with up to two decimals, rounded
// down (63770 is "63.77").
func FormatCPU(m int64) string {
	whole, frac := m/1000, m%1000/10
	if frac == 0 {
		return strconv.FormatInt(whole, 10)
	}
	s := fmt.Sprintf("%d.%02d", whole, frac)
	return strings.TrimSuffix(s, "0")
}

// FormatMemory writes bytes as Gi with one decimal, rounded down, or as Mi
// below 1Gi (483401Mi is "472Gi", 1.5Gi is "1.5Gi").
func FormatMemory(b int64) string {
	if b < gibibyte {
		return strconv.FormatInt(b/mebibyte, 10) + "Mi"
	}
	whole, tenth := b/gibibyte, b%gibibyte*10/gibibyte
	if tenth == 0 {
		return strconv.FormatInt(whole, 10) + "Gi"
	}
	return fmt.Sprintf("%d.%dGi", whole, tenth)
}
