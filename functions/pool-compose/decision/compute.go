package decision

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/sizing"
)

// Input is everything Compute needs, gathered from one RunFunctionRequest.
type Input struct {
	Now time.Time

	// Config is the function input with the cluster's EnvironmentConfig
	// merged over it, defaulted.
	Config *v1beta1.Input
	// Settings says where each setting came from.
	Settings Settings
	// SettingsProblem says which settings are invalid, naming the
	// EnvironmentConfig field (or function input field) to fix.
	SettingsProblem string

	// Pool names the pool's objects: the claim's name, else the XPool's.
	Pool string
	// Namespace holds namespaced objects: the claim's namespace, else the
	// input's namespace.
	Namespace string
	Deleting  bool

	Spec     poolv1alpha1.PoolSpec
	Previous poolv1alpha1.PoolStatus
	// PreviousConditions are the reasons of the XPool's conditions by
	// type, so events are emitted only when a condition changes.
	PreviousConditions map[string]string
	// WatchCircuit is whether Crossplane drops the watch events of the
	// pool's composed resources (follow.go).
	WatchCircuit WatchCircuit

	// QueryServices are those Crossplane supplied for the pool's
	// Requirements: the ones it names, selects or that carry its label.
	QueryServices []QueryService
	// CRDs are the detection CRDs that exist.
	CRDs map[string]bool

	// Observed composed resources by name, as Crossplane sent them.
	Observed map[resource.Name]*structpb.Struct
	// Existing are the cluster-scoped objects named after the pool that
	// exist, whoever owns them, by the composed-resource name the pool
	// would give them (see OwnedNames).
	Existing map[resource.Name]*structpb.Struct

	// Size decides the pool's instance type.
	Size func(SizeRequest) (sizing.Result, error)
	// KWOKCatalog is the catalog a kwok cluster's instance types come from
	// (the function's --kwok-catalog); empty means the kwok catalog.
	KWOKCatalog sizing.Cloud

	// RequestSize is the size of the request's QueryServices.
	RequestSize RequestSize
}

// Output is the decision: the desired objects and the XPool's status.
type Output struct {
	Desired map[resource.Name]*unstructured.Unstructured
	// Lazy are desired objects built only when a render cache lacks them.
	Lazy  map[resource.Name]Lazy
	Ready map[resource.Name]resource.Ready
	// Preserve names objects Compute could not decide this time: their
	// observed state is kept unchanged.
	Preserve []resource.Name

	Status poolv1alpha1.PoolStatus
	// CountsUnknown leaves the status's executor and node counts out: the
	// PoolCapacity's figures are not current (Facts.CapacityStale).
	CountsUnknown bool
	Conditions    []Condition
	Results       []Result
	RequeueAfter  time.Duration
}

// Lazy is a desired object that Build makes from the inputs Key encodes:
// two Lazy objects with one Key are the same object.
type Lazy struct {
	Key   string
	Build func() *unstructured.Unstructured
}

// lazyKey encodes what an object is built from.
func lazyKey(kind string, in any) string {
	b, err := json.Marshal(in)
	if err != nil {
		return ""
	}
	return kind + string(b)
}

// Condition is a condition of the XPool and its claim.
type Condition struct {
	Type    string
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// Result is an event on the XPool and its claim.
type Result struct {
	Warning bool
	Reason  string
	Message string
}

// Condition types.
const (
	CondProvisioned   = "NodesProvisioned"
	CondCompatible    = "QueryServicesCompatible"
	CondImagesWarm    = "ImagesWarm"
	CondPullSecrets   = "ImagePullSecretsUsable"
	CondSuspended     = "Suspended"
	CondCapacityKnown = "CapacityObserved"
)

// errInvalid marks a Pool spec that cannot be rendered at all.
var errInvalid = errors.New("invalid pool")

// Validate checks what the Pool's schema should already enforce, so a spec
// that bypassed it is refused with a message instead of rendered wrong:
// one error per problem, at the field's path, whose detail says what to
// change.
func Validate(pool string, s poolv1alpha1.PoolSpec) field.ErrorList {
	var errs field.ErrorList
	name, spec := field.NewPath("metadata", "name"), field.NewPath("spec")
	if pool == "" {
		errs = append(errs, field.Required(name, "the pool has no name"))
	}
	if len(pool) > 63 {
		errs = append(errs, field.Invalid(name, pool, fmt.Sprintf("the pool name %q is %d characters long: pool nodes and pods carry it as a label value, which holds at most 63; pick a shorter name", pool, len(pool))))
	}
	if s.MaxExecutors < 1 {
		errs = append(errs, field.Invalid(spec.Child("maxExecutors"), s.MaxExecutors, fmt.Sprintf("spec.maxExecutors is %d: set it to at least 1", s.MaxExecutors)))
	}
	if s.MinExecutors < 0 || s.MinExecutors > max(s.MaxExecutors, 0) {
		errs = append(errs, field.Invalid(spec.Child("minExecutors"), s.MinExecutors, fmt.Sprintf("spec.minExecutors is %d: set it between 0 and spec.maxExecutors (%d)", s.MinExecutors, s.MaxExecutors)))
	}
	if s.ExecutorsPerNode < 0 {
		errs = append(errs, field.Invalid(spec.Child("executorsPerNode"), s.ExecutorsPerNode, fmt.Sprintf("spec.executorsPerNode is %d: set it to at least 1", s.ExecutorsPerNode)))
	}
	if sel := spec.Child("queryServiceSelector"); s.QueryServiceSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(s.QueryServiceSelector); err != nil {
			errs = append(errs, field.Invalid(sel, s.QueryServiceSelector, fmt.Sprintf("spec.queryServiceSelector is invalid: %v", err)))
		} else if SelectorLabels(s.QueryServiceSelector) == nil {
			errs = append(errs, field.Invalid(sel, s.QueryServiceSelector, "spec.queryServiceSelector must pin at least one label to one value (a matchLabels entry, or a matchExpressions entry with operator In and one value): "+
				"QueryServices are fetched by label equality, and a selector without one would fetch every QueryService in the cluster on every reconcile"))
		}
	}
	if len(s.AllowedQueryServices) == 0 && s.QueryServiceSelector == nil {
		errs = append(errs, field.Required(spec.Child("allowedQueryServices"), "set spec.allowedQueryServices or spec.queryServiceSelector: a pool must say which QueryServices may use it"))
	}
	if s.ImageConfig != nil && s.ImageConfig.UnusedImageRetention != "" {
		if d, err := time.ParseDuration(s.ImageConfig.UnusedImageRetention); err != nil || d < 0 {
			errs = append(errs, field.Invalid(spec.Child("imageConfig", "unusedImageRetention"), s.ImageConfig.UnusedImageRetention, fmt.Sprintf("spec.imageConfig.unusedImageRetention %q is not a duration such as 1h or 30m", s.ImageConfig.UnusedImageRetention)))
		}
	}
	if s.StorageAgent != nil && s.StorageAgent.Enabled && s.StorageAgent.Image == "" {
		errs = append(errs, field.Required(spec.Child("storageAgent", "image"), "spec.storageAgent.image is required when spec.storageAgent.enabled is true"))
	}
	if ic := s.InstanceConfig; ic != nil && ic.InstanceType != "" && ic.InstanceFamily != "" && !typeInFamily(ic.InstanceType, ic.InstanceFamily) {
		errs = append(errs, field.Invalid(spec.Child("instanceConfig", "instanceType"), ic.InstanceType, "spec.instanceConfig.instanceType must belong to spec.instanceConfig.instanceFamily: make them agree or set only one"))
	}
	for i, t := range s.Tolerations {
		if t.Key == "" && t.Operator != string(corev1.TolerationOpExists) {
			errs = append(errs, field.Invalid(spec.Child("tolerations").Index(i).Child("operator"), t.Operator, fmt.Sprintf("spec.tolerations[%d] has no key: a toleration without a key must use operator Exists", i)))
		}
	}
	return errs
}

// InvalidSpec is the error that makes a pool with errs Fatal: errInvalid
// and each error's detail, which names the field and what to change.
func InvalidSpec(errs field.ErrorList) error {
	details := make([]string, 0, len(errs))
	for _, e := range errs {
		details = append(details, e.Detail)
	}
	return fmt.Errorf("%w: %s", errInvalid, strings.Join(details, "; "))
}

// typeInFamily is the Pool API's CEL rule for instanceType and
// instanceFamily, word for word: the type starts with the family, or it is
// an Azure size (Standard_...) whose series letter is the family's first
// letter and whose version suffix (_v5) is the family's last two
// characters, for families of more than two characters.
func typeInFamily(t, f string) bool {
	if strings.HasPrefix(t, f) {
		return true
	}
	return strings.HasPrefix(t, "Standard_") && len(f) > 2 &&
		strings.HasPrefix(t, "Standard_"+f[:1]) && strings.HasSuffix(t, "_"+f[len(f)-2:])
}

// Facts are what Compute establishes about a pool before it decides
// anything. No decision changes them.
type Facts struct {
	Detection Detection
	// PerNode is spec.executorsPerNode, at least 1.
	PerNode int32
	// Attachments are the QueryServices the pool allows or that point at
	// it; Attached are those of them that attach.
	Attachments, Attached []Attachment
	// Scheduling is where the pool's own pods go.
	Scheduling objects.Scheduling
	// Capacity is what the PoolCapacity observed; nil before it reports.
	Capacity *CapacityObservation
	// CapacityStale says why Capacity is not current; nil when it is.
	CapacityStale *Staleness
	// ExecutorsHaveRun locks the pool's instance type.
	ExecutorsHaveRun bool
	// Static tells whether the pool runs on existing nodes.
	Static bool
	// Tenant is what the settings grant the pool's namespace.
	Tenant Tenant
}

// perNode is how many executors share one node: spec.executorsPerNode,
// at least 1.
func perNode(spec poolv1alpha1.PoolSpec) int32 {
	return max(spec.ExecutorsPerNode, 1)
}

// establish works out the pool's facts; err says why its attachments
// cannot be decided (an invalid selector).
func establish(in Input) (Facts, error) {
	f := Facts{
		Detection: Detect(in.Spec.Provisioning, in.Config, in.CRDs),
		PerNode:   perNode(in.Spec),
		Capacity:  observeCapacity(in.Observed[objects.ComposedCapacity]),
	}
	if f.Capacity != nil {
		f.CapacityStale = capacityStaleness(in.Observed[objects.ComposedCapacity])
	}
	f.ExecutorsHaveRun = executorsHaveRun(in.Previous.Sizing, f.Capacity)
	f.Static = static(in, f.Detection)
	f.Tenant = TenantOf(in.Config, in.Namespace)
	atts, err := Attach(in.Pool, in.Namespace, in.Spec, in.QueryServices, f.Tenant.MayAttachFrom)
	f.Attachments, f.Attached = atts, attached(atts)
	f.Scheduling = scheduling(in, f.Detection, f.Static)
	return f, err
}

// Compute decides everything about one pool. It reads only in (the clock is
// in.Now) and never fails: problems become the Failed or Pending phase,
// conditions and results.
//
// It establishes the pool's facts, then decides in this order, each
// decision a function of the inputs and of the decisions before it: the
// settings it waits for, what the claim asks beyond them, the warm set, whether another pool holds its
// names, its nodes (sizing, then the Karpenter NodePool and NodeClass or
// the cloud's node pool), the PoolCapacity, the placeholders, the storage
// agent, the admission policy, and last the status, which reads them all.
func Compute(in Input) Output {
	f, attachErr := establish(in)
	out := newAssembly()
	out.CountsUnknown = f.CapacityStale != nil
	if attachErr != nil {
		out.add(Outcome{Problem: failed("InvalidSelector", attachErr.Error())})
	}
	status := poolv1alpha1.PoolStatus{Cloud: f.Detection.Cloud, ProvisioningMethod: f.Detection.Method}

	// Settings it waits for, then a claim that asks beyond them: either
	// keeps every object as observed and decides nothing else.
	held := awaitSettings(in, f)
	out.add(held)
	if held.Problem == nil {
		held = refuseClaim(in, f) // tenancy (tenancy.go)
		out.add(held)
	}
	if held.Problem != nil {
		wf := waitingFacts(in, f)
		out.CountsUnknown = wf.CapacityStale != nil
		st, o := waitingStatus(in, wf, status, out.problem)
		out.Status = st
		out.add(o)
		return out.Output
	}

	warm, o := decideWarm(in, f)
	if t, taken := heldName(in.Pool, in.Namespace, in.Existing); taken {
		// Another namespace's pool holds the name: compose nothing more,
		// so nothing of that pool is touched, keep what this pool
		// composed already, and say so on the claim.
		o.Desired, o.Lazy, o.Ready = nil, nil, nil
		o.preserve(ownObjects(in.Pool, in.Namespace, in.Observed)...)
		out.add(o)
		out.add(Outcome{Problem: failed("NameTaken", t.Message(in.Pool, in.Namespace))})
		st, o := decideStatus(StatusArgs{In: in, Facts: f, Status: status, Warm: warm, Problem: out.problem, Taken: true})
		out.Status = st
		out.add(o)
		return out.Output
	}
	out.add(o)
	if f.Detection.Problem != "" {
		out.add(Outcome{Problem: failed("ProvisioningUnsupported", f.Detection.Problem)})
	}

	var nodes Nodes
	if out.failed() {
		out.add(Outcome{Preserve: nodeObjects})
	} else {
		nodes, o = decideNodes(in, f, len(warm.Images))
		out.add(o)
	}
	if _, decided := out.Desired[objects.ComposedNodeRole]; !decided {
		out.add(keepNodeIAM(in, f)) // node IAM (iam.go)
	}
	// The warm slots are decided before the PoolCapacity, which keeps
	// their CapacityBuffer, and their outcome added after it.
	warmSlots := in.Previous.WarmCapacity
	warmOutcome := Outcome{Preserve: []resource.Name{objects.ComposedPlaceholder, objects.ComposedPlaceholderPriorityClass, objects.ComposedBuffer, objects.ComposedBufferTemplate}}
	canHold := true
	if out.problem == nil {
		p := placeholderInput(in, f, nodes.Size)
		warmSlots, warmOutcome = decidePlaceholders(p)
		canHold = p.SlotOK && !p.Suspend
	}
	buffer := bufferOf(warmSlots, canHold)
	out.add(decideCapacity(in, f, warm.imageRefs(), buffer))
	out.add(warmOutcome)
	out.add(decideStorageAgent(in, f))
	out.add(decideAgentPriority(in, f, len(warm.DaemonSets)))
	out.add(decideAdmission(in, f))
	out.add(decideFollow(in.Now, in.WatchCircuit))

	st, o := decideStatus(StatusArgs{In: in, Facts: f, Status: status, Nodes: nodes, Warm: warm, Problem: out.problem, Waiting: out.waiting})
	st.WarmCapacity = warmSlots
	out.Status = st
	out.add(o)
	if msg := sizeWarning(in.RequestSize); msg != "" {
		out.add(Outcome{Results: []Result{{Warning: true, Reason: "RequestNearSizeLimit", Message: msg}}})
	}
	return out.Output
}

// nodeObjects are the objects that provision the pool's nodes.
var nodeObjects = []resource.Name{objects.ComposedNodePool, objects.ComposedNodeClass, objects.ComposedCloudPool, objects.ComposedCloudPoolDraining}

// readyOf converts a readiness.
func readyOf(ok bool) resource.Ready {
	if ok {
		return resource.ReadyTrue
	}
	return resource.ReadyFalse
}
