package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/durationpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// Function composes XPools.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
	// now is the clock; tests set a fixed one.
	now func() time.Time
	// size decides instance types; nil uses the sizing catalog.
	size func(SizeInput) (SizeResult, error)
}

// minTTL bounds how soon the function asks to be called again.
const minTTL = 5 * time.Second

// RunFunction composes one XPool: it gathers the XPool, its observed
// objects and the QueryServices and CRDs it asked Crossplane for, computes
// the desired objects and status, and applies them to the response.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	log := f.log
	if log == nil {
		log = logging.NewNopLogger()
	}

	in, ok := f.gather(req, rsp)
	if !ok {
		return rsp, nil
	}
	log = log.WithValues("pool", in.Pool, "namespace", in.Namespace)
	out := Compute(in)
	if err := apply(req, rsp, in, out); err != nil {
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
func (f *Function) gather(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) (Input, bool) {
	cfg := &v1beta1.Input{}
	if err := request.GetInput(req, cfg); err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot read the function input: fix the pipeline step's input in the Composition"))
		return Input{}, false
	}
	Default(cfg)

	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot read the observed XPool"))
		return Input{}, false
	}
	pool, ns := poolName(oxr.Resource.Object, oxr.Resource.GetName(), oxr.Resource.GetLabels(), cfg.Namespace)
	spec, prev, err := decodePool(oxr.Resource.Object)
	if err != nil {
		response.Fatal(rsp, errors.Wrapf(err, "cannot read the spec of pool %q", pool))
		return Input{}, false
	}
	if err := Validate(pool, spec); err != nil {
		response.Fatal(rsp, errors.Wrapf(err, "pool %q", pool))
		return Input{}, false
	}

	ocds, err := request.GetObservedComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot read the pool's observed objects"))
		return Input{}, false
	}
	observed := make(map[resource.Name]*unstructured.Unstructured, len(ocds))
	for n, o := range ocds {
		observed[n] = &unstructured.Unstructured{Object: o.Resource.Object}
	}

	rsp.Requirements = Requirements()
	qss, crds, ok, err := required(req)
	if err != nil || !ok {
		// Not supplied yet (Crossplane's first call) or unreadable: keep
		// every observed object as it is and wait for the next call.
		if err != nil {
			response.Warning(rsp, errors.Wrap(err, "cannot read the QueryServices and CRDs the pool needs; keeping its objects unchanged")).TargetCompositeAndClaim()
		}
		if err := keepObserved(req, rsp, observed); err != nil {
			response.Fatal(rsp, errors.Wrapf(err, "cannot keep the objects of pool %q", pool))
		}
		return Input{}, false
	}

	size := f.size
	if size == nil {
		size = catalogSizer(cfg.CatalogOverrides)
	}
	now := time.Now
	if f.now != nil {
		now = f.now
	}
	return Input{
		Now: now(), Config: cfg, Pool: pool, Namespace: ns,
		Deleting: oxr.Resource.GetDeletionTimestamp() != nil,
		Spec:     spec, Previous: prev,
		QueryServices: qss, CRDs: crds, Observed: observed, Size: size,
	}, true
}

// poolName returns the name of the pool's objects and their namespace: the
// claim's name and namespace from Crossplane's claim labels (or
// spec.claimRef), else the XPool's name and the input's namespace.
func poolName(obj map[string]any, xrName string, labels map[string]string, defNS string) (string, string) {
	name, ns := labels[labelClaimName], labels[labelClaimNamespace]
	if name == "" {
		name, _, _ = unstructured.NestedString(obj, "spec", "claimRef", "name")
		ns, _, _ = unstructured.NestedString(obj, "spec", "claimRef", "namespace")
	}
	if name == "" {
		return xrName, defNS
	}
	if ns == "" {
		ns = defNS
	}
	return name, ns
}

// decodePool reads the Pool spec and status out of an XPool, ignoring the
// fields Crossplane adds.
func decodePool(obj map[string]any) (poolv1alpha1.PoolSpec, poolv1alpha1.PoolStatus, error) {
	var p struct {
		Spec   poolv1alpha1.PoolSpec   `json:"spec"`
		Status poolv1alpha1.PoolStatus `json:"status"`
	}
	b, err := json.Marshal(map[string]any{"spec": obj["spec"], "status": obj["status"]})
	if err != nil {
		return p.Spec, p.Status, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p.Spec, p.Status, err
	}
	return p.Spec, p.Status, nil
}

// Required-resource names.
const (
	reqQueryServices = "queryservices"
	reqCRDPrefix     = "crd:"
)

// Requirements are the resources the function asks Crossplane for on every
// call: every QueryService in the cluster (an empty label selector across
// all namespaces), from which the function picks the allowed ones, the
// QueryService named in inheritNodeConfigFrom and the ones that point at the
// pool without being allowed; and each CRD that reveals how the cluster
// provisions nodes, by name.
func Requirements() *fnv1.Requirements {
	r := &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{
		reqQueryServices: {
			ApiVersion: qsv1alpha1.GroupVersionKind.GroupVersion().String(),
			Kind:       qsv1alpha1.GroupVersionKind.Kind,
			Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{}}},
		},
	}}
	for _, crd := range detectionCRDs {
		r.Resources[reqCRDPrefix+crd] = &fnv1.ResourceSelector{
			ApiVersion: "apiextensions.k8s.io/v1",
			Kind:       "CustomResourceDefinition",
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: crd},
		}
	}
	return r
}

// required reads the required resources. ok is false until Crossplane has
// supplied every one of them.
func required(req *fnv1.RunFunctionRequest) ([]qsv1alpha1.QueryService, map[string]bool, bool, error) {
	rr, err := request.GetRequiredResources(req)
	if err != nil {
		return nil, nil, false, err
	}
	items, ok := rr[reqQueryServices]
	if !ok {
		return nil, nil, false, nil
	}
	crds := make(map[string]bool, len(detectionCRDs))
	for _, crd := range detectionCRDs {
		found, ok := rr[reqCRDPrefix+crd]
		if !ok {
			return nil, nil, false, nil
		}
		crds[crd] = len(found) > 0
	}
	qss := make([]qsv1alpha1.QueryService, 0, len(items))
	for _, it := range items {
		var q qsv1alpha1.QueryService
		b, err := json.Marshal(it.Resource.Object)
		if err != nil {
			return nil, nil, false, err
		}
		if err := json.Unmarshal(b, &q); err != nil {
			// One malformed QueryService must not hide the others.
			continue
		}
		qss = append(qss, q)
	}
	return qss, crds, true, nil
}

// apply writes Compute's Output into the response.
func apply(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, in Input, out Output) error {
	preserve := map[resource.Name]bool{}
	for _, n := range out.Preserve {
		preserve[n] = true
	}
	dcds, err := request.GetDesiredComposedResources(req)
	if err != nil {
		return errors.Wrap(err, "cannot read desired composed resources")
	}
	for n, u := range out.Desired {
		d := resource.NewDesiredComposed()
		d.Resource.Unstructured = *u
		if r, ok := out.Ready[n]; ok {
			d.Ready = r
		}
		dcds[n] = d
	}
	for n := range preserve {
		if _, ok := out.Desired[n]; ok {
			continue
		}
		if o := in.Observed[n]; o != nil {
			dcds[n] = keep(o)
		}
	}
	if in.Deleting {
		for n, o := range in.Observed {
			if _, ok := dcds[n]; !ok {
				dcds[n] = keep(o)
			}
		}
	}
	if err := response.SetDesiredComposedResources(rsp, dcds); err != nil {
		return errors.Wrap(err, "cannot set desired composed resources")
	}

	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return errors.Wrap(err, "cannot read the desired XPool")
	}
	st, err := toMap(out.Status)
	if err != nil {
		return errors.Wrap(err, "cannot encode the pool's status")
	}
	if err := dxr.Resource.SetValue("status", st); err != nil {
		return errors.Wrap(err, "cannot set the pool's status")
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return errors.Wrap(err, "cannot set the desired XPool")
	}

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
		rsp.Meta.Ttl = durationpb.New(max(out.RequeueAfter, minTTL))
	}
	return nil
}

// keepObserved copies every observed object into desired state unchanged.
func keepObserved(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, observed map[resource.Name]*unstructured.Unstructured) error {
	dcds, err := request.GetDesiredComposedResources(req)
	if err != nil {
		return err
	}
	for n, o := range observed {
		if _, ok := dcds[n]; !ok {
			dcds[n] = keep(o)
		}
	}
	return response.SetDesiredComposedResources(rsp, dcds)
}

// keep turns an observed object into desired state: its content without
// the status and the metadata the API server owns.
func keep(o *unstructured.Unstructured) *resource.DesiredComposed {
	u := o.DeepCopy()
	delete(u.Object, "status")
	md := map[string]any{"name": u.GetName()}
	if ns := u.GetNamespace(); ns != "" {
		md["namespace"] = ns
	}
	if l := u.GetLabels(); len(l) > 0 {
		md["labels"] = stringMap(l)
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		md["annotations"] = stringMap(a)
	}
	u.Object["metadata"] = md
	d := resource.NewDesiredComposed()
	d.Resource.Unstructured = *u
	return d
}

// toMap encodes a value as an unstructured map.
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}
