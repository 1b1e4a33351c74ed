package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// Input is everything Compute needs, gathered from one RunFunctionRequest.
type Input struct {
	Now time.Time

	// Config is the function input, defaulted.
	Config *v1beta1.Input

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

	// QueryServices is every QueryService in the cluster.
	QueryServices []qsv1alpha1.QueryService
	// CRDs are the detection CRDs that exist.
	CRDs map[string]bool

	// Observed composed resources by name, as Crossplane sent them.
	Observed map[resource.Name]*structpb.Struct
	// Existing are the cluster-scoped objects named after the pool that
	// exist, whoever owns them, by the composed-resource name the pool
	// would give them (see ownedNames).
	Existing map[resource.Name]*structpb.Struct

	// Size decides the pool's instance type.
	Size func(SizeInput) (SizeResult, error)
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

	Status       poolv1alpha1.PoolStatus
	Conditions   []Condition
	Results      []Result
	RequeueAfter time.Duration
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
// that bypassed it is refused with a message instead of rendered wrong.
func Validate(pool string, s poolv1alpha1.PoolSpec) error {
	var errs []string
	if pool == "" {
		errs = append(errs, "the pool has no name")
	}
	if len(pool) > 63 {
		errs = append(errs, fmt.Sprintf("the pool name %q is %d characters long: pool nodes and pods carry it as a label value, which holds at most 63; pick a shorter name", pool, len(pool)))
	}
	if s.MaxExecutors < 1 {
		errs = append(errs, fmt.Sprintf("spec.maxExecutors is %d: set it to at least 1", s.MaxExecutors))
	}
	if s.MinExecutors < 0 || s.MinExecutors > max(s.MaxExecutors, 0) {
		errs = append(errs, fmt.Sprintf("spec.minExecutors is %d: set it between 0 and spec.maxExecutors (%d)", s.MinExecutors, s.MaxExecutors))
	}
	if s.ExecutorsPerNode < 0 {
		errs = append(errs, fmt.Sprintf("spec.executorsPerNode is %d: set it to at least 1", s.ExecutorsPerNode))
	}
	if s.QueryServiceSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(s.QueryServiceSelector); err != nil {
			errs = append(errs, fmt.Sprintf("spec.queryServiceSelector is invalid: %v", err))
		}
	}
	if len(s.AllowedQueryServices) == 0 && s.QueryServiceSelector == nil {
		errs = append(errs, "set spec.allowedQueryServices or spec.queryServiceSelector: a pool must say which QueryServices may use it")
	}
	if s.ImageConfig != nil && s.ImageConfig.UnusedImageRetention != "" {
		if d, err := time.ParseDuration(s.ImageConfig.UnusedImageRetention); err != nil || d < 0 {
			errs = append(errs, fmt.Sprintf("spec.imageConfig.unusedImageRetention %q is not a duration such as 1h or 30m", s.ImageConfig.UnusedImageRetention))
		}
	}
	if s.StorageAgent != nil && s.StorageAgent.Enabled && s.StorageAgent.Image == "" {
		errs = append(errs, "spec.storageAgent.image is required when spec.storageAgent.enabled is true")
	}
	if s.InstanceConfig != nil && s.InstanceConfig.InstanceType != "" && s.InstanceConfig.InstanceFamily != "" &&
		!strings.HasPrefix(s.InstanceConfig.InstanceType, s.InstanceConfig.InstanceFamily) {
		errs = append(errs, "spec.instanceConfig.instanceType must belong to spec.instanceConfig.instanceFamily: make them agree or set only one")
	}
	for i, t := range s.Tolerations {
		if t.Key == "" && t.Operator != string(corev1.TolerationOpExists) {
			errs = append(errs, fmt.Sprintf("spec.tolerations[%d] has no key: a toleration without a key must use operator Exists", i))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", errInvalid, strings.Join(errs, "; "))
	}
	return nil
}

// state is Compute's working set.
type state struct {
	in  Input
	out *Output

	det      Detection
	epn      int32
	sched    Scheduling
	atts     []Attachment
	capObs   *CapacityObservation
	size     *SizeResult
	notReady []string
	images   int    // warm images: one warmup pod per node each
	problem  string // why the pool is Pending or Failed
	failed   bool
	taken    bool // another pool holds the pool's cluster-wide names
}

// Compute decides everything about one pool. It reads only in (the clock is
// in.Now) and never fails: problems become the Failed or Pending phase,
// conditions and results.
func Compute(in Input) Output {
	out := Output{
		Desired: map[resource.Name]*unstructured.Unstructured{},
		Lazy:    map[resource.Name]Lazy{},
		Ready:   map[resource.Name]resource.Ready{},
	}
	s := &state{in: in, out: &out, epn: max(in.Spec.ExecutorsPerNode, 1)}
	s.capObs = observeCapacity(in.Observed[rnCapacity])
	s.det = Detect(in.Spec.Provisioning, in.Config.Provisioning, in.CRDs)

	s.out.Status = poolv1alpha1.PoolStatus{
		Cloud:              s.det.Cloud,
		ProvisioningMethod: s.det.Method,
	}

	atts, err := Attach(in.Pool, in.Namespace, in.Spec, in.QueryServices)
	if err != nil {
		s.fail("InvalidSelector", err.Error())
	}
	s.atts = atts
	s.sched = s.scheduling()

	warm := s.warm()
	if t, taken := TakenName(in.Pool, in.Namespace, in.Existing); taken {
		// Another namespace's pool holds the name: compose nothing, so
		// nothing of that pool is touched, and say so on the claim.
		s.fail("NameTaken", t.Message(in.Pool, in.Namespace))
		s.taken = true
		clear(out.Lazy)
		s.status(warm)
		return out
	}
	if s.det.Problem != "" {
		s.fail("ProvisioningUnsupported", s.det.Problem)
	}
	if s.failed {
		s.preserve(rnNodePool, rnNodeClass, rnCloudPool)
	} else {
		s.nodes()
	}
	s.capacity()
	if !s.failed && s.problem == "" {
		s.placeholders()
	} else {
		s.preserve(rnPlaceholder, rnPriorityClass)
	}
	s.storageAgent()
	s.admission()
	s.status(warm)
	return out
}

// fail marks the pool Failed with a reason and a message.
func (s *state) fail(reason, msg string) {
	if s.failed {
		return
	}
	s.failed, s.problem = true, msg
	s.condition(CondProvisioned, metav1.ConditionFalse, reason, msg)
}

// pending marks the pool Pending: it waits for something a person must do.
func (s *state) pending(reason, msg string) {
	if s.failed || s.problem != "" {
		return
	}
	s.problem = msg
	s.condition(CondProvisioned, metav1.ConditionFalse, reason, msg)
}

func (s *state) condition(typ string, st metav1.ConditionStatus, reason, msg string) {
	s.out.Conditions = append(s.out.Conditions, Condition{Type: typ, Status: st, Reason: reason, Message: msg})
}

func (s *state) event(warning bool, reason, msg string) {
	s.out.Results = append(s.out.Results, Result{Warning: warning, Reason: reason, Message: msg})
}

// preserve keeps the observed state of objects Compute cannot decide now.
func (s *state) preserve(names ...resource.Name) {
	s.out.Preserve = append(s.out.Preserve, names...)
}

// emit adds a desired object.
func (s *state) emit(n resource.Name, u *unstructured.Unstructured, ready bool) {
	s.out.Desired[n] = u
	s.out.Ready[n] = readyOf(ready)
	if !ready {
		s.notReady = append(s.notReady, u.GetKind()+" "+u.GetName())
	}
}

// readyOf converts a readiness.
func readyOf(ok bool) resource.Ready {
	if ok {
		return resource.ReadyTrue
	}
	return resource.ReadyFalse
}

// sortedNames sorts resource names.
func sortedNames[V any](m map[resource.Name]V) []resource.Name {
	out := slices.Collect(maps.Keys(m))
	slices.Sort(out)
	return out
}
