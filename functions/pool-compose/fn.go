package main

import (
	"context"
	"maps"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/functions/pool-compose/remote"
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
	// decisions keeps responses across calls; nil decides every request.
	decisions *decisionCache
	// kwokCatalog is the catalog pools on a kwok cluster are sized from;
	// empty means the kwok catalog.
	kwokCatalog sizing.Cloud
	// maxRecv is the gRPC receive limit in bytes, which bounds requests;
	// 0 when unknown.
	maxRecv int
}

// RunFunction composes one XPool: it answers a request it has decided
// before from the decision cache (decisions.go), and decides any other.
// The gRPC server serves it through wireServer (encoded.go), which sends
// the response's wire form instead.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, _ := f.answer(req, false)
	return rsp, nil
}

// answer answers req: the response, and a message that encodes as it does
// and costs less to encode, to be sent in its place: the encoding the
// decision cache keeps (encode), else, when onWire or when the response
// is to be kept, rsp with its objects from the render cache as their
// encodings (renderCache.wire). The message is nil otherwise, and when
// the kept response is served with its TTL shortened (decisionCache.get).
func (f *Function) answer(req *fnv1.RunFunctionRequest, onWire bool) (rsp, wire *fnv1.RunFunctionResponse) {
	now := time.Now()
	if f.now != nil {
		now = f.now()
	}
	if f.decisions == nil {
		rsp, _ := f.compose(req, now)
		if onWire {
			wire = f.cache.wire(rsp)
		}
		return rsp, wire
	}
	key := digestOf(req)
	if rsp, enc, ok := f.decisions.get(key, now); ok {
		return rsp, enc
	}
	rsp, until := f.compose(req, now)
	wire = f.cache.wire(rsp)
	if enc := f.decisions.put(key, rsp, wire, now, until); enc != nil {
		return rsp, enc
	}
	return rsp, wire
}

// compose decides one request at now: it gathers the XPool, its observed
// objects and the QueryServices and CRDs it asked Crossplane for, computes
// the desired objects and status (decision.Compute in the pool's own
// cluster, or remote.Compose in its workload cluster), and applies them to
// the response. until is how long the response holds as the clock moves
// on (decision.Output.Until).
func (f *Function) compose(req *fnv1.RunFunctionRequest, now time.Time) (rsp *fnv1.RunFunctionResponse, until time.Time) {
	rsp = response.To(req, response.DefaultTTL)
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

	in, ok := f.gather(req, rsp, now)
	if !ok {
		return rsp, time.Time{}
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
		return rsp, out.Until
	}
	log.Debug("Composed pool", "phase", out.Status.Phase, "objects", len(out.Desired))
	return rsp, out.Until
}

// gather reads the request into decision.Input, at the clock reading now.
// It returns false when the response is complete already: a Fatal result,
// or a first call that only asks Crossplane for the required resources
// (observed objects are kept meanwhile).
func (f *Function) gather(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, now time.Time) (decision.Input, bool) {
	cfg, err := decoded.input(req)
	if err != nil {
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
	_, envOK := req.GetRequiredResources()[reqEnvironment]
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
	settings, errs := decoded.merge(req, cfg)
	cfg = settings.Config
	_, ns = poolName(oxr, cfg.Namespace)
	size := f.size
	if size == nil {
		size = decision.CatalogSizer(cfg.CatalogOverrides, f.kwokCatalog)
	}
	return decision.Input{
		Now: now, Config: cfg, Settings: settings, SettingsProblem: settings.Problem(errs), Pool: pool, Namespace: ns,
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
		var err error
		if spec, err = decoded.spec(s); err != nil {
			return spec, poolv1alpha1.PoolStatus{}, err
		}
	}
	return spec, decodeStatus(observed.Field(xr, "status").GetStructValue()), nil
}

// Crossplane's claim labels on a composite resource.
const (
	labelClaimName      = "crossplane.io/claim-name"
	labelClaimNamespace = "crossplane.io/claim-namespace"
)

// decodeStatus reads the fields of a previous status that the function
// compares with: the phase, the instance type, the warm capacity and warm
// level, and the QueryService reports.
func decodeStatus(s *structpb.Struct) poolv1alpha1.PoolStatus {
	var st poolv1alpha1.PoolStatus
	if s == nil {
		return st
	}
	st.Phase = poolv1alpha1.PoolPhase(observed.String(s, "phase"))
	st.DerivedInstanceType, st.DerivedFrom = observed.String(s, "derivedInstanceType"), observed.String(s, "derivedFrom")
	if sz := observed.Field(s, "sizing").GetStructValue(); sz != nil {
		st.Sizing = &poolv1alpha1.SizingStatus{
			ExecutorsHaveRun: observed.Field(sz, "executorsHaveRun").GetBoolValue(),
			Architecture:     observed.String(sz, "architecture"), ArchitectureFrom: observed.String(sz, "architectureFrom"),
		}
	}
	if w := observed.Field(s, "warmCapacity").GetStructValue(); w != nil {
		st.WarmCapacity = &poolv1alpha1.WarmCapacityStatus{
			Method: observed.String(w, "method"), Slots: int32(observed.Number(observed.Field(w, "slots"))), CapacityBuffer: observed.String(w, "capacityBuffer"),
		}
		if t, err := time.Parse(time.RFC3339, observed.String(w, "awaitingSince")); err == nil {
			st.WarmCapacity.AwaitingSince = &metav1.Time{Time: t}
		}
	}
	if w := observed.Field(s, "warmPolicy").GetStructValue(); w != nil {
		st.WarmPolicy = &poolv1alpha1.WarmPolicyStatus{
			Type: observed.String(w, "type"), Executors: int32(observed.Number(observed.Field(w, "executors"))),
			Source: observed.String(w, "source"), Reason: observed.String(w, "reason"), DollarsPerHour: observed.String(w, "dollarsPerHour"),
		}
		if t, err := time.Parse(time.RFC3339, observed.String(w, "until")); err == nil {
			st.WarmPolicy.Until = &metav1.Time{Time: t}
		}
	}
	reports := observed.Field(s, "attachedQueryServices").GetListValue().GetValues()
	if len(reports) > 0 {
		st.AttachedQueryServices = make([]poolv1alpha1.AttachedQueryService, 0, len(reports))
	}
	for _, v := range reports {
		a := v.GetStructValue()
		if a == nil {
			continue
		}
		q := poolv1alpha1.AttachedQueryService{
			QueryService: poolv1alpha1.QueryServiceReference{Name: observed.String(a, "queryService", "name"), Namespace: observed.String(a, "queryService", "namespace")},
			Attached:     observed.Field(a, "attached").GetBoolValue(), Compatible: observed.Field(a, "compatible").GetBoolValue(),
			InstanceType: observed.String(a, "instanceType"), RequiredCPU: observed.String(a, "requiredCpu"), RequiredMemory: observed.String(a, "requiredMemory"),
			Message: observed.String(a, "message"), MaxPoolExecutors: int32(observed.Number(observed.Field(a, "maxPoolExecutors"))),
		}
		if t, err := time.Parse(time.RFC3339, observed.String(a, "lastChecked")); err == nil {
			q.LastChecked = &metav1.Time{Time: t}
		}
		st.AttachedQueryServices = append(st.AttachedQueryServices, q)
	}
	return st
}

// decodeConditions reads the reasons of the XPool's conditions by type.
func decodeConditions(s *structpb.Struct) map[string]string {
	out := map[string]string{}
	for _, v := range observed.Field(s, "conditions").GetListValue().GetValues() {
		c := v.GetStructValue()
		out[observed.String(c, "type")] = observed.String(c, "reason")
	}
	return out
}
