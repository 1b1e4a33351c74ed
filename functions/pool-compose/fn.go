package main

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/burstpool/burstpool/functions/pool-compose/remote"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/internal/sizing"
)

// Function composes XPools.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
	// now is the clock; tests set a fixed one.
	now func() time.Time
	// size decides instance types; nil uses the sizing catalog.
	size func(decision.SizeRequest) (sizing.Result, error)
	// cache keeps encoded objects across calls; nil renders every time.
	cache *renderCache
	// kwokCatalog is the catalog pools on a kwok cluster are sized from;
	// empty means the kwok catalog.
	kwokCatalog sizing.Cloud
	// maxRecv is the gRPC receive limit in bytes, which bounds requests;
	// 0 when unknown.
	maxRecv int
}

// RunFunction composes one XPool: it gathers the XPool, its observed
// objects and the QueryServices and CRDs it asked Crossplane for, computes
// the desired objects and status (Compute in the pool's own cluster, or
// remote.Compose in its workload cluster), and applies them to the response.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	// Desired state of its own, so that writing it leaves the request as
	// it came.
	rsp.Desired = &fnv1.State{
		Composite: req.GetDesired().GetComposite(),
		Resources: maps.Clone(req.GetDesired().GetResources()),
	}
	log := f.log
	if log == nil {
		log = logging.NewNopLogger()
	}

	in, ok := f.gather(req, rsp)
	if !ok {
		return rsp, nil
	}
	log = log.WithValues("pool", in.Pool, "namespace", in.Namespace)
	var out decision.Output
	if pc := remote.Target(in.Config, in.Spec); pc == "" || decision.ClaimRefused(in) {
		// The pool's own cluster. A refused claim chooses nothing, its
		// workload cluster included: Compute refuses it and keeps what it
		// composed.
		out = decision.Compute(in)
	} else {
		out = remote.Compose(in, pc, workloadQuery(rsp.Requirements))
	}
	if err := apply(req, rsp, in, out, f.cache); err != nil {
		response.Fatal(rsp, errors.Wrapf(err, "cannot compose pool %q", in.Pool))
		return rsp, nil
	}
	log.Debug("Composed pool", "phase", out.Status.Phase, "objects", len(out.Desired))
	return rsp, nil
}

// gather reads the request into Compute's Input. It returns false when the
// response is complete already: a Fatal result, or a first call that only
// asks Crossplane for the required resources (observed objects are kept
// meanwhile).
func (f *Function) gather(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) (decision.Input, bool) {
	cfg := &v1beta1.Input{}
	if err := request.GetInput(req, cfg); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot read the function input: fix the pipeline step's input in the Composition"))
		return decision.Input{}, false
	}

	oxr := req.GetObserved().GetComposite().GetResource()
	if oxr == nil {
		response.Fatal(rsp, errors.New("the request has no obs XPool"))
		return decision.Input{}, false
	}
	inputNS := cfg.Namespace
	if inputNS == "" {
		inputNS = decision.DefaultNamespace
	}
	pool, ns := poolName(oxr, inputNS)
	spec, prev, err := decodePool(oxr)
	if err != nil {
		response.Fatal(rsp, errors.Wrapf(err, "cannot read the spec of pool %q", pool))
		return decision.Input{}, false
	}
	if errs := decision.Validate(pool, spec); len(errs) > 0 {
		response.Fatal(rsp, errors.Wrapf(decision.InvalidSpec(errs), "pool %q", pool))
		return decision.Input{}, false
	}

	// Observed objects stay Structs: the function reads a few fields of
	// each, and copies some unchanged.
	obs := make(map[resource.Name]*structpb.Struct, len(req.GetObserved().GetResources()))
	for n, o := range req.GetObserved().GetResources() {
		if o.GetResource() != nil {
			obs[resource.Name(n)] = o.GetResource()
		}
	}

	// The pool's namespace before the settings are merged: requirements
	// depend on the spec alone, and on it only for XPools without a claim.
	rsp.Requirements = Requirements(pool, ns, spec)
	qss, crds, ok := required(req, rsp.Requirements)
	rsp.Requirements.Resources[reqEnvironment] = environmentSelector(cfg)
	envs, envOK := environmentData(req)
	existing := owners(req)
	if !ok || !envOK {
		// Not supplied yet (Crossplane's first call): keep every observed
		// object as it is and wait for the next call.
		if err := keepObserved(rsp, obs); err != nil {
			response.Fatal(rsp, errors.Wrapf(err, "cannot keep the objects of pool %q", pool))
		}
		return decision.Input{}, false
	}

	// Settings problems are decided by Compute, which keeps the pool's
	// objects and makes it Pending with the field to fix.
	settings, errs := decision.MergeSettings(req.GetInput(), cfg, envs, defaultHelperImage)
	cfg = settings.Config
	_, ns = poolName(oxr, cfg.Namespace)
	size := f.size
	if size == nil {
		size = decision.CatalogSizer(cfg.CatalogOverrides, f.kwokCatalog)
	}
	now := time.Now
	if f.now != nil {
		now = f.now
	}
	return decision.Input{
		Now: now(), Config: cfg, Settings: settings, SettingsProblem: settings.Problem(errs), Pool: pool, Namespace: ns,
		Deleting: observed.String(oxr, "metadata", "deletionTimestamp") != "",
		Spec:     spec, Previous: prev,
		PreviousConditions: decodeConditions(observed.Field(oxr, "status").GetStructValue()),
		WatchCircuit:       decision.ReadWatchCircuit(observed.Field(oxr, "status").GetStructValue()),
		QueryServices:      qss, CRDs: crds, Observed: obs, Existing: existing, Size: size, KWOKCatalog: f.kwokCatalog,
		RequestSize: measureRequest(req, rsp.Requirements, f.maxRecv),
	}, true
}

// poolName returns the name of the pool's objects and their namespace: the
// claim's name and namespace from Crossplane's claim labels (or
// spec.claimRef), else the XPool's name and the input's namespace.
func poolName(xr *structpb.Struct, defNS string) (string, string) {
	name, ns := observed.String(xr, "metadata", "labels", labelClaimName), observed.String(xr, "metadata", "labels", labelClaimNamespace)
	if name == "" {
		name, ns = observed.String(xr, "spec", "claimRef", "name"), observed.String(xr, "spec", "claimRef", "namespace")
	}
	if name == "" {
		return observed.String(xr, "metadata", "name"), defNS
	}
	if ns == "" {
		ns = defNS
	}
	return name, ns
}

// decodePool reads the Pool spec out of an XPool, ignoring the fields
// Crossplane adds, and the parts of its status the function compares with.
func decodePool(xr *structpb.Struct) (poolv1alpha1.PoolSpec, poolv1alpha1.PoolStatus, error) {
	var spec poolv1alpha1.PoolSpec
	if s := observed.Field(xr, "spec").GetStructValue(); s != nil {
		b, err := json.Marshal(s.AsMap())
		if err != nil {
			return spec, poolv1alpha1.PoolStatus{}, err
		}
		if err := json.Unmarshal(b, &spec); err != nil {
			return spec, poolv1alpha1.PoolStatus{}, err
		}
	}
	return spec, decodeStatus(observed.Field(xr, "status").GetStructValue()), nil
}

// Required-resource names. Each QueryService named by allowedQueryServices
// or inheritNodeConfigFrom is one requirement, "queryservice:{ns}/{name}".
const (
	reqQSPrefix  = "queryservice:"
	reqSelected  = "queryservices:selected"
	reqPointing  = "queryservices:pointing"
	reqCRDPrefix = "crd:"
	// reqOwnerPrefix names the requirement of one of decision.OwnedNames.
	reqOwnerPrefix = "owner:"
)

// Requirements are the resources the function asks Crossplane for when
// composing the pool called pool in namespace ns: only the QueryServices the
// pool can attach or must report, never every QueryService in the cluster.
//
//   - each QueryService in allowedQueryServices and inheritNodeConfigFrom,
//     by name in its namespace;
//   - the QueryServices queryServiceSelector selects, across namespaces, by
//     its equality labels (decision.SelectorLabels); its other expressions are
//     evaluated here on what Crossplane returns;
//   - the QueryServices labelled e6data.io/pool={pool}, across namespaces:
//     those that point at the pool are reported even when it does not allow
//     them;
//   - each CRD that reveals how the cluster provisions nodes, by name;
//   - by name, the cluster-scoped objects the pool would compose whose names
//     another namespace's pool may hold (decision.OwnedNames).
//
// They depend on the spec alone, so they are the same on every call of a
// reconcile, as Crossplane requires.
func Requirements(pool, ns string, spec poolv1alpha1.PoolSpec) *fnv1.Requirements {
	qsSel := func(m *fnv1.ResourceSelector) *fnv1.ResourceSelector {
		m.ApiVersion, m.Kind = qsAPIVersion, qsv1alpha1.GroupVersionKind.Kind
		return m
	}
	r := &fnv1.Requirements{Resources: make(map[string]*fnv1.ResourceSelector, len(spec.AllowedQueryServices)+len(decision.DetectionCRDs)+len(decision.OwnedNames)+3)}
	byName := func(name, namespace string) {
		namespace = decision.RefNamespace(namespace, ns)
		r.Resources[reqQSPrefix+namespace+"/"+name] = qsSel(&fnv1.ResourceSelector{
			Match: &fnv1.ResourceSelector_MatchName{MatchName: name}, Namespace: &namespace,
		})
	}
	for _, a := range spec.AllowedQueryServices {
		byName(a.Name, a.Namespace)
	}
	if i := spec.InheritNodeConfigFrom; i != nil {
		byName(i.Name, i.Namespace)
	}
	pointing := map[string]string{qsv1alpha1.LabelPool: pool}
	if len(validation.IsValidLabelValue(pool)) > 0 {
		// No QueryService can carry the label.
		pointing = nil
	}
	if l := decision.SelectorLabels(spec.QueryServiceSelector); len(l) > 0 {
		r.Resources[reqSelected] = qsSel(&fnv1.ResourceSelector{Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: l}}})
		if maps.Equal(l, pointing) {
			// The selector asks for exactly these already.
			pointing = nil
		}
	}
	if pointing != nil {
		r.Resources[reqPointing] = qsSel(&fnv1.ResourceSelector{Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: pointing}}})
	}
	for _, crd := range decision.DetectionCRDs {
		r.Resources[reqCRDPrefix+crd] = &fnv1.ResourceSelector{
			ApiVersion: "apiextensions.k8s.io/v1",
			Kind:       "CustomResourceDefinition",
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: crd},
		}
	}
	for _, o := range decision.OwnedNames {
		r.Resources[reqOwnerPrefix+string(o.Resource)] = &fnv1.ResourceSelector{
			ApiVersion: o.APIVersion,
			Kind:       o.Kind,
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: pool + o.Suffix},
		}
	}
	return r
}

// qsAPIVersion is the QueryService's apiVersion.
var qsAPIVersion = qsv1alpha1.GroupVersionKind.GroupVersion().String()

// isQSRequirement tells the QueryService requirements from the others (the
// CRDs, the owned names and the EnvironmentConfigs).
func isQSRequirement(name string) bool {
	return strings.HasPrefix(name, reqQSPrefix) || name == reqSelected || name == reqPointing
}

// required reads the required resources of reqs. ok is false until
// Crossplane has supplied every one of them. The QueryServices are those of
// every QueryService requirement (one may come twice; Attach takes each
// once).
func required(req *fnv1.RunFunctionRequest, reqs *fnv1.Requirements) ([]decision.QueryService, map[string]bool, bool) {
	rr := req.GetRequiredResources()
	n := 0
	for name := range reqs.GetResources() {
		items, ok := rr[name]
		if !ok {
			return nil, nil, false
		}
		if isQSRequirement(name) {
			n += len(items.GetItems())
		}
	}
	crds := make(map[string]bool, len(decision.DetectionCRDs))
	for _, crd := range decision.DetectionCRDs {
		crds[crd] = len(rr[reqCRDPrefix+crd].GetItems()) > 0
	}
	if items := rr[reqCRDPrefix+decision.CRDCapacityBuffer].GetItems(); len(items) > 0 {
		// A CapacityBuffer CRD of another version than the one composed
		// is not served for this purpose.
		crds[decision.CRDCapacityBuffer] = decision.ServesVersion(items[0].GetResource(), objects.BufferVersion)
	}
	qss := make([]decision.QueryService, 0, n)
	// In a fixed order, so that duplicates resolve the same way each call.
	for _, name := range slices.Sorted(maps.Keys(reqs.GetResources())) {
		if !isQSRequirement(name) {
			continue
		}
		for _, it := range rr[name].GetItems() {
			qss = append(qss, decision.DecodeQueryService(it.GetResource()))
		}
	}
	return qss, crds, true
}

// owners reads the cluster-scoped objects named after the pool that
// exist (decision.OwnedNames), by composed-resource name. Call it once required has
// found every requirement supplied.
func owners(req *fnv1.RunFunctionRequest) map[resource.Name]*structpb.Struct {
	rr := req.GetRequiredResources()
	out := map[resource.Name]*structpb.Struct{}
	for _, o := range decision.OwnedNames {
		if items := rr[reqOwnerPrefix+string(o.Resource)].GetItems(); len(items) > 0 && items[0].GetResource() != nil {
			out[o.Resource] = items[0].GetResource()
		}
	}
	return out
}

// apply writes Compute's Output into the response.
func apply(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, in decision.Input, out decision.Output, cache *renderCache) error {
	preserve := map[resource.Name]bool{}
	for _, n := range out.Preserve {
		preserve[n] = true
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	put := func(n resource.Name, st *structpb.Struct, ready resource.Ready) {
		rsp.Desired.Resources[string(n)] = &fnv1.Resource{Resource: st, Ready: readyProto(ready)}
	}
	for n, u := range out.Desired {
		st, err := resource.AsStruct(u)
		if err != nil {
			return errors.Wrapf(err, "cannot encode %s", n)
		}
		put(n, st, out.Ready[n])
	}
	for n, l := range out.Lazy {
		st, err := cache.render(l)
		if err != nil {
			return errors.Wrapf(err, "cannot encode %s", n)
		}
		put(n, st, out.Ready[n])
	}
	for n := range preserve {
		_, d := out.Desired[n]
		_, l := out.Lazy[n]
		if o := in.Observed[n]; o != nil && !d && !l {
			if err := keepOne(rsp, n, o); err != nil {
				return err
			}
		}
	}
	if in.Deleting {
		for n, o := range in.Observed {
			if _, ok := rsp.Desired.Resources[string(n)]; !ok {
				if err := keepOne(rsp, n, o); err != nil {
					return err
				}
			}
		}
	}

	// Only the status is set on the desired XPool, straight into the
	// Struct: decoding the whole XPool to set one field costs more than
	// composing the pool.
	dxr := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for k, v := range req.GetDesired().GetComposite().GetResource().GetFields() {
		dxr.Fields[k] = v
	}
	dxr.Fields["status"] = statusValue(out.Status, out.CountsUnknown, newPreviousReports(in.Previous.AttachedQueryServices, observed.Field(req.GetObserved().GetComposite().GetResource(), "status").GetStructValue()))
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	rsp.Desired.Composite = &fnv1.Resource{Resource: dxr, ConnectionDetails: req.GetDesired().GetComposite().GetConnectionDetails(), Ready: req.GetDesired().GetComposite().GetReady()}

	for _, c := range out.Conditions {
		var co *response.ConditionOption
		switch c.Status {
		case "True":
			co = response.ConditionTrue(rsp, c.Type, c.Reason)
		case "False":
			co = response.ConditionFalse(rsp, c.Type, c.Reason)
		default:
			co = response.ConditionUnknown(rsp, c.Type, c.Reason)
		}
		if c.Message != "" {
			co = co.WithMessage(c.Message)
		}
		co.TargetCompositeAndClaim()
	}
	for _, r := range out.Results {
		if r.Warning {
			response.Warning(rsp, errors.New(r.Message)).WithReason(r.Reason).TargetCompositeAndClaim()
			continue
		}
		response.Normal(rsp, r.Message).WithReason(r.Reason).TargetCompositeAndClaim()
	}
	if out.RequeueAfter > 0 && out.RequeueAfter < response.DefaultTTL {
		rsp.Meta.Ttl = durationpb.New(max(out.RequeueAfter, decision.MinRequeueAfter))
	}
	return nil
}

// keepObserved copies every observed object into desired state unchanged,
// unless an earlier pipeline step desires it.
func keepObserved(rsp *fnv1.RunFunctionResponse, observed map[resource.Name]*structpb.Struct) error {
	for n, o := range observed {
		if _, ok := rsp.GetDesired().GetResources()[string(n)]; ok {
			continue
		}
		if err := keepOne(rsp, n, o); err != nil {
			return err
		}
	}
	return nil
}

// keepOne puts the observed object o into desired state as n.
func keepOne(rsp *fnv1.RunFunctionResponse, n resource.Name, o *structpb.Struct) error {
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	rsp.Desired.Resources[string(n)] = &fnv1.Resource{Resource: observed.Keep(o)}
	return nil
}

// readyProto converts a readiness.
func readyProto(r resource.Ready) fnv1.Ready {
	switch r {
	case resource.ReadyTrue:
		return fnv1.Ready_READY_TRUE
	case resource.ReadyFalse:
		return fnv1.Ready_READY_FALSE
	}
	return fnv1.Ready_READY_UNSPECIFIED
}

// Crossplane's claim labels on a composite resource.
const (
	labelClaimName      = "crossplane.io/claim-name"
	labelClaimNamespace = "crossplane.io/claim-namespace"
)
