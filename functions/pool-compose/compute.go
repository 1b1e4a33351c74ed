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
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/warmup"
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

// scheduling is where pool pods go: nodes with the pool label (the
// capacity provider watches only those), and, on existing nodes, also
// spec.nodeSelector. Karpenter and managed cloud pools put the label on
// their nodes; on existing nodes a person labels them (the
// NodesProvisioned condition says how).
func (s *state) scheduling() Scheduling {
	sel := maps.Clone(s.in.Spec.NodeSelector)
	if !isKarpenter(s.det.Method) && s.det.Method != methodStatic && s.manageNodePool() {
		// The cloud labels the nodes of a new pool itself: only the labels
		// burstpool puts on them select them.
		sel = ownLabels(sel)
	}
	if len(sel) == 0 && s.static() {
		// Nothing picks existing nodes yet (Pending).
		return Scheduling{Tolerations: tolerationsOf(s.in.Pool, s.in.Spec.Tolerations)}
	}
	if sel == nil {
		sel = map[string]string{}
	}
	sel[qsv1alpha1.LabelPool] = s.in.Pool
	return Scheduling{NodeSelector: sel, Tolerations: tolerationsOf(s.in.Pool, s.in.Spec.Tolerations)}
}

// static tells whether the pool runs on existing nodes.
func (s *state) static() bool {
	return s.det.Method == methodStatic || (!isKarpenter(s.det.Method) && !s.manageNodePool())
}

// selectorString renders a node selector as kubectl's -l argument.
func selectorString(sel map[string]string) string {
	parts := make([]string, 0, len(sel))
	for _, k := range sortedKeys(sel) {
		parts = append(parts, k+"="+sel[k])
	}
	return strings.Join(parts, ",")
}

// cloudDomains own the node labels under them: a node pool cannot set
// them, the cloud or Kubernetes does.
var cloudDomains = []string{"kubernetes.io", "k8s.io", "linode.com", "digitalocean.com", "coreweave.com", "coreweave.cloud"}

// ownLabels are the labels of sel that a node pool may put on its nodes.
func ownLabels(sel map[string]string) map[string]string {
	out := make(map[string]string, len(sel))
	for k, v := range sel {
		domain, _, ok := strings.Cut(k, "/")
		if ok && slices.ContainsFunc(cloudDomains, func(d string) bool { return domain == d || strings.HasSuffix(domain, "."+d) }) {
			continue
		}
		out[k] = v
	}
	return out
}

// manageNodePool tells whether the function emits the cloud's node pool.
func (s *state) manageNodePool() bool {
	if p := s.in.Spec.Provisioning; p != nil && p.ManageNodePool {
		return true
	}
	return s.in.Config.Provisioning != nil && s.in.Config.Provisioning.ManageNodePool
}

// warm plans the warmup DaemonSets.
func (s *state) warm() WarmPlan {
	ic := s.in.Spec.ImageConfig
	if ic == nil {
		ic = &poolv1alpha1.ImageConfig{}
	}
	retention := defaultRetention
	if ic.UnusedImageRetention != "" {
		if d, err := time.ParseDuration(ic.UnusedImageRetention); err == nil {
			retention = d
		}
	}
	images := map[string]string{}
	for _, a := range attached(s.atts) {
		if a.QS.Spec.Executor.Image != "" {
			images[a.Key()] = a.QS.Spec.Executor.Image
		}
	}
	names, problems := pullSecrets(ic.ImagePullSecrets, s.in.Namespace)
	if len(problems) > 0 {
		msg := strings.Join(problems, "; ")
		s.condition(CondPullSecrets, metav1.ConditionFalse, "SecretNotInPoolNamespace", msg)
		if s.in.PreviousConditions[CondPullSecrets] != "SecretNotInPoolNamespace" {
			s.event(true, "SecretNotInPoolNamespace", msg)
		}
	} else if len(ic.ImagePullSecrets) > 0 {
		s.condition(CondPullSecrets, metav1.ConditionTrue, "InPoolNamespace", "")
	}
	observed := map[resource.Name]*structpb.Struct{}
	for n, u := range s.in.Observed {
		if strings.HasPrefix(string(n), warmupPrefix) {
			observed[n] = u
		}
	}
	var failures []WarmupFailure
	if s.capObs != nil {
		failures = s.capObs.WarmupFailures
	}
	p := PlanWarmup(WarmArgs{
		Pool: s.in.Pool, Namespace: s.in.Namespace, Now: s.in.Now,
		Cached: ic.CachedImages, AutoCollect: ic.AutoCollectImages == nil || *ic.AutoCollectImages,
		QSImages: images, Retention: retention,
		HelperImage: s.in.Config.Warmup.HelperImage, PullSecrets: names,
		Scheduling: s.sched, Observed: observed, Failures: failures,
	})
	for _, msg := range p.Problems {
		s.event(true, "UnreadableWarmupAnnotation", msg)
	}
	s.images = len(p.Images)
	if len(s.sched.NodeSelector) == 0 {
		// Nothing picks the pool's nodes: a DaemonSet now would run on
		// every node of the cluster. Keep what exists until it is fixed.
		for n := range observed {
			s.preserve(n)
		}
		return p
	}
	for n, l := range p.DaemonSets {
		s.out.Lazy[n] = l
		s.out.Ready[n] = readyOf(p.Ready[n])
	}
	if p.RequeueAfter > 0 {
		s.out.RequeueAfter = p.RequeueAfter
	}
	for _, d := range p.Dropped {
		if o := observed[resource.Name(d)]; o != nil {
			s.event(false, "WarmImageDropped", fmt.Sprintf("image %s left the warm set more than %s ago: its warmup DaemonSet %s is removed",
				str(o, "metadata", "annotations", warmup.AnnotationImage), retention, str(o, "metadata", "name")))
		}
	}
	return p
}

// overhead is the per-node requests of the pool's DaemonSets.
func (s *state) overhead(images int) []PodRequests {
	helper := Resources{CPU: apiresource.MustParse("5m"), Memory: apiresource.MustParse("16Mi")}
	out := make([]PodRequests, 0, images+1)
	for range images {
		out = append(out, PodRequests{Init: []Resources{helper, helper}, Containers: []Resources{helper}})
	}
	if sa := s.in.Spec.StorageAgent; sa != nil && sa.Enabled {
		out = append(out, PodRequests{Containers: []Resources{storageResources(sa)}})
	}
	return out
}

// storageResources are the storage agent's requests.
func storageResources(sa *poolv1alpha1.StorageAgent) Resources {
	r := Resources{CPU: storageAgentDefaults.CPU.DeepCopy(), Memory: storageAgentDefaults.Memory.DeepCopy()}
	if sa.CPU != nil {
		r.CPU = sa.CPU.DeepCopy()
	}
	if sa.Memory != nil {
		r.Memory = sa.Memory.DeepCopy()
	}
	return r
}

// sizeInput gathers the sizing request.
func (s *state) sizeInput(images int) SizeInput {
	in := SizeInput{
		Cloud:            s.det.Cloud,
		ExecutorsPerNode: s.epn,
		Previous:         s.in.Previous.DerivedInstanceType,
		ExecutorsRunning: s.capObs.occupied(),
		Overhead:         s.overhead(images),
	}
	if ic := s.in.Spec.InstanceConfig; ic != nil {
		in.InstanceType, in.InstanceFamily = ic.InstanceType, ic.InstanceFamily
		in.AutoUpgrade, in.Spot = ic.AutoUpgrade, ic.SpotEnabled
	}
	if r := s.in.Spec.InheritNodeConfigFrom; r != nil {
		key := refNamespace(r.Namespace, s.in.Namespace) + "/" + r.Name
		in.InheritQueryService = key
		for i := range s.in.QueryServices {
			q := &s.in.QueryServices[i]
			if q.Namespace+"/"+q.Name == key {
				in.InheritInstanceType = q.Spec.Executor.InstanceType
			}
		}
	}
	for _, a := range attached(s.atts) {
		r := a.QS.Spec.Executor.Resources
		e := ExecutorRequest{QueryService: a.Key()}
		if r.CPU != nil {
			e.CPU = r.CPU.DeepCopy()
		}
		if r.Memory != nil {
			e.Memory = r.Memory.DeepCopy()
		}
		in.Executors = append(in.Executors, e)
	}
	return in
}

// nodes sizes the pool and emits its NodePool and NodeClass, or its cloud
// node pool.
func (s *state) nodes() {
	static := s.static()
	if static && len(s.in.Spec.NodeSelector) == 0 {
		s.pending("NodeSelectorRequired", fmt.Sprintf("the cluster provisions nodes with %s, which burstpool does not manage for this pool: set spec.nodeSelector to pick the pool's nodes (or spec.provisioning.manageNodePool to create them)", s.det.Method))
		return
	}
	if static {
		s.condition(CondProvisioned, metav1.ConditionTrue, "ExistingNodes", fmt.Sprintf(
			"pool pods run on existing nodes that match spec.nodeSelector and carry the pool label: label them with kubectl label nodes -l %s %s=%s",
			selectorString(s.in.Spec.NodeSelector), qsv1alpha1.LabelPool, s.in.Pool))
		s.sizeForStatus()
		return
	}
	in := s.sizeInput(s.images)
	if in.InstanceType == "" && in.InheritInstanceType == "" && len(in.Executors) == 0 && in.Previous == "" && in.InstanceFamily == "" {
		s.pending("NoInstanceType", "no QueryService is attached and spec.instanceConfig names no instance type: attach a QueryService or set spec.instanceConfig.instanceType")
		s.preserve(rnNodePool, rnNodeClass, rnCloudPool)
		return
	}
	if in.InheritQueryService != "" && in.InheritInstanceType == "" && in.InstanceType == "" {
		s.pending("InheritedQueryServiceMissing", fmt.Sprintf("spec.inheritNodeConfigFrom names QueryService %s, which does not exist or sets no spec.executor.instanceType", in.InheritQueryService))
		s.preserve(rnNodePool, rnNodeClass, rnCloudPool)
		return
	}
	res, err := s.in.Size(in)
	if err != nil {
		s.fail("SizingFailed", fmt.Sprintf("cannot size pool %q: %v", s.in.Pool, err))
		s.preserve(rnNodePool, rnNodeClass, rnCloudPool, rnPlaceholder, rnPriorityClass)
		return
	}
	s.size = &res
	s.sizeEvents(res)
	nodes := int64((s.in.Spec.MaxExecutors + s.epn - 1) / s.epn)

	if isKarpenter(s.det.Method) {
		kind := nodeClassKindOf(s.det)
		nc, err := NodeClass(NodeClassArgs{
			Pool: s.in.Pool, Namespace: s.in.Namespace, ClusterName: s.in.Config.ClusterName,
			Kind: kind, LocalNVMe: res.LocalNVMe, Config: s.in.Config,
		})
		if err != nil {
			s.fail("NodeClassIncomplete", err.Error())
			s.preserve(rnNodePool, rnNodeClass)
			return
		}
		types := []string{res.InstanceType}
		if in.Spot && len(res.SpotTypes) > 0 {
			types = res.SpotTypes
		}
		np := NodePool(NodePoolArgs{
			Pool: s.in.Pool, Namespace: s.in.Namespace, NodeClass: kind, Types: types, Arch: res.Arch,
			Spot: in.Spot, Taints: poolTaints(s.in.Pool, s.sched.Tolerations), NodeSelector: s.in.Spec.NodeSelector,
			Nodes: nodes, Capacity: res.Capacity, Suspend: s.in.Spec.Suspend, Tuning: *s.in.Config.Karpenter,
		})
		s.emit(rnNodeClass, nc, conditionReady(s.in.Observed[rnNodeClass], kind.Kind == "KWOKNodeClass"))
		s.emit(rnNodePool, np, conditionReady(s.in.Observed[rnNodePool], false))
		s.out.Status.NodePoolName = np.GetName()
		s.out.Status.NodeClassName = nc.GetName()
		s.condition(CondProvisioned, metav1.ConditionTrue, "KarpenterNodePool", fmt.Sprintf("Karpenter launches %s nodes for the pool (NodePool %s)", strings.Join(types, ", "), np.GetName()))
		return
	}

	cfg := s.in.Config.Provisioning
	if cfg == nil {
		cfg = &v1beta1.Provisioning{}
	}
	clusterID := cfg.ClusterID
	if p := s.in.Spec.Provisioning; p != nil && p.ClusterID != "" {
		clusterID = p.ClusterID
	}
	minNodes := int32(0)
	if !s.in.Spec.Suspend {
		minNodes = int32((s.in.Spec.MinExecutors + s.epn - 1) / s.epn)
	}
	labels := ownLabels(s.in.Spec.NodeSelector)
	delete(labels, qsv1alpha1.LabelPool)
	cp, err := cloudpool.Build(cloudpool.Input{
		Pool: s.in.Pool, Namespace: s.in.Namespace, Method: s.det.Method, ClusterID: clusterID,
		InstanceType: res.InstanceType, MinNodes: minNodes, MaxNodes: int32(nodes),
		Labels: labels, Taints: poolTaints(s.in.Pool, s.sched.Tolerations)[1:],
		ProviderConfigName: cfg.ProviderConfigName, Region: cfg.Region, Namespaced: s.det.DOKSNamespaced,
	})
	if err != nil {
		s.fail("CloudNodePoolIncomplete", err.Error())
		s.preserve(rnCloudPool)
		return
	}
	s.emit(rnCloudPool, cp, conditionReady(s.in.Observed[rnCloudPool], false))
	s.out.Status.NodePoolName = cp.GetName()
	s.condition(CondProvisioned, metav1.ConditionTrue, "CloudNodePool", fmt.Sprintf("%s node pool %s holds %d to %d %s nodes", s.det.Method, cp.GetName(), minNodes, nodes, res.InstanceType))
}

// sizeForStatus checks compatibility for pools on existing nodes, when the
// Pool names their instance type.
func (s *state) sizeForStatus() {
	in := s.sizeInput(s.images)
	if in.InstanceType == "" {
		return
	}
	if res, err := s.in.Size(in); err == nil {
		s.size = &res
	}
}

// sizeEvents reports changes of the pool's instance type.
func (s *state) sizeEvents(res SizeResult) {
	prev := s.in.Previous.DerivedInstanceType
	switch {
	case res.Upgraded && prev != res.InstanceType:
		s.event(false, "InstanceTypeUpgraded", fmt.Sprintf("the pool moves from %s to %s to fit its QueryServices (%s)", prev, res.InstanceType, res.DerivedFrom))
	case prev != res.InstanceType:
		s.event(false, "InstanceTypeDerived", fmt.Sprintf("the pool's nodes are %s (from %s)", res.InstanceType, res.DerivedFrom))
	}
}

// emit adds a desired object.
func (s *state) emit(n resource.Name, u *unstructured.Unstructured, ready bool) {
	s.out.Desired[n] = u
	s.out.Ready[n] = readyOf(ready)
	if !ready {
		s.notReady = append(s.notReady, u.GetKind()+" "+u.GetName())
	}
}

// capacity emits the PoolCapacity.
func (s *state) capacity() {
	if len(s.sched.NodeSelector) == 0 {
		// Nothing picks the pool's nodes yet (Pending): keep what exists.
		s.preserve(rnCapacity)
		return
	}
	policy := s.in.Config.Capacity
	u := PoolCapacity(CapacityArgs{
		Pool: s.in.Pool, Namespace: s.in.Namespace, NodeSelector: s.sched.NodeSelector,
		ExecutorsPerNode: s.epn, MaxExecutors: s.in.Spec.MaxExecutors, QueryServices: attached(s.atts),
		Suspend: s.in.Spec.Suspend, DeleteFailed: policy.DeleteFailedExecutors, Unauthorized: policy.UnauthorizedExecutors,
		ProviderConfigName: policy.ProviderConfigName,
	})
	s.emit(rnCapacity, u, conditionReady(s.in.Observed[rnCapacity], false))
}

// slot is one executor slot: the largest compatible executor request, or,
// when none is known, an equal share of a node.
func (s *state) slot() (Resources, bool) {
	var r Resources
	compatible := map[string]bool{}
	if s.size != nil {
		for _, c := range s.size.Compatibility {
			compatible[c.QueryService] = c.Compatible
		}
	}
	found := false
	for _, a := range attached(s.atts) {
		if s.size != nil && !compatible[a.Key()] {
			continue
		}
		ex := a.QS.Spec.Executor.Resources
		if ex.CPU != nil && ex.CPU.Cmp(r.CPU) > 0 {
			r.CPU, found = ex.CPU.DeepCopy(), true
		}
		if ex.Memory != nil && ex.Memory.Cmp(r.Memory) > 0 {
			r.Memory, found = ex.Memory.DeepCopy(), true
		}
	}
	if found && !r.CPU.IsZero() && !r.Memory.IsZero() {
		return r, true
	}
	if s.size == nil || s.size.Allocatable.CPU.IsZero() {
		return r, false
	}
	cpu := apiresource.NewMilliQuantity(s.size.Allocatable.CPU.MilliValue()/int64(s.epn), apiresource.DecimalSI)
	mem := apiresource.NewQuantity(s.size.Allocatable.Memory.Value()/int64(s.epn)/(1<<20)*(1<<20), apiresource.BinarySI)
	return Resources{CPU: *cpu, Memory: *mem}, true
}

// placeholders emits the PriorityClass and the Deployment that hold
// minExecutors slots warm.
func (s *state) placeholders() {
	replicas := max(0, s.in.Spec.MinExecutors-s.capObs.occupied())
	if s.in.Spec.Suspend {
		replicas = 0
	}
	slot, ok := s.slot()
	if !ok {
		if s.in.Spec.MinExecutors > 0 {
			s.event(true, "NoWarmSlotSize", "minExecutors is set but no executor size is known yet: attach a compatible QueryService or set spec.instanceConfig.instanceType")
		}
		s.preserve(rnPlaceholder, rnPriorityClass)
		return
	}
	pc := s.in.Config.Placeholder
	class := pc.PriorityClassName
	if class == "" {
		class = s.in.Pool + sfxPlaceholder
		s.emit(rnPriorityClass, PriorityClass(class, s.in.Pool, s.in.Namespace, *pc.Priority), s.in.Observed[rnPriorityClass] != nil)
	}
	d := Placeholder(PlaceholderArgs{
		Pool: s.in.Pool, Namespace: s.in.Namespace, Replicas: replicas, Slot: slot,
		Image: pc.Image, PriorityClassName: class, Scheduling: s.sched,
	})
	// Placeholders wait for nodes; the pool does not wait for them.
	s.out.Desired[rnPlaceholder] = d
	s.out.Ready[rnPlaceholder] = readyOf(s.in.Observed[rnPlaceholder] != nil)
}

// storageAgent emits the storage agent DaemonSet.
func (s *state) storageAgent() {
	sa := s.in.Spec.StorageAgent
	if sa == nil || !sa.Enabled {
		return
	}
	if len(s.sched.NodeSelector) == 0 {
		s.preserve(rnStorageAgent)
		return
	}
	u := StorageAgent(StorageAgentArgs{
		Pool: s.in.Pool, Namespace: s.in.Namespace, Image: sa.Image,
		Resources: storageResources(sa), Scheduling: s.sched,
	})
	s.emit(rnStorageAgent, u, daemonSetReady(s.in.Observed[rnStorageAgent]))
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
