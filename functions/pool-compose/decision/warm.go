package decision

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/internal/warmup"
)

// WarmupPrefix starts the composed-resource name of every warmup DaemonSet
// (warmup.ResourceName).
const WarmupPrefix = "warmup-"

// defaultRetention is how long an image that left the warm set stays warm
// when the Pool does not say.
const defaultRetention = time.Hour

// WarmArgs is what the warm set is planned from.
type WarmArgs struct {
	Pool, Namespace string
	Now             time.Time
	Cached          []string
	AutoCollect     bool
	// QSImages maps "ns/name" of attached QueryServices to their executor
	// image.
	QSImages    map[string]string
	Retention   time.Duration
	HelperImage string
	PullSecrets []string
	Scheduling  objects.Scheduling
	// PriorityClassName is the warmup pods' priority class.
	PriorityClassName string
	// Observed are the observed warmup DaemonSets by composed-resource name.
	Observed map[resource.Name]*structpb.Struct
	Failures []WarmupFailure
	// MaxImages bounds the warm set and its DaemonSets (warmup.maxImages).
	MaxImages int
}

// WarmPlan is the warm set: the DaemonSets to keep, the status of each image
// and when to look again.
type WarmPlan struct {
	DaemonSets   map[resource.Name]Lazy
	Ready        map[resource.Name]bool
	Images       []poolv1alpha1.CachedImage
	Dropped      []string
	RequeueAfter time.Duration
	// Until is how long the plan holds as the clock moves on
	// (Output.Until).
	Until time.Time
	// Problems are observed DaemonSets whose annotations could not be read.
	Problems []string
	// LeftOut are the wanted images beyond MaxImages, not warmed.
	LeftOut []string
}

// PlanWarmup decides the warmup DaemonSets: one per image of the warm set
// (cachedImages, plus the attached QueryServices' images when autoCollect),
// and, for the unused-image retention, images that left the set stay until
// the retention passes, counted from the unused-since annotation of their
// observed DaemonSet.
func PlanWarmup(a WarmArgs) WarmPlan {
	var p WarmPlan
	wanted, leftOut := warmup.Bound(warmup.Set(a.Cached, a.AutoCollect, a.QSImages), a.MaxImages)
	p.LeftOut = leftOut
	var observed []warmup.Observed
	for _, name := range slices.Sorted(maps.Keys(a.Observed)) {
		u := a.Observed[name]
		o, err := warmup.ParseObserved(string(name), annotationsOf(u))
		if err != nil {
			p.Problems = append(p.Problems, err.Error())
		}
		observed = append(observed, o)
	}
	plan := warmup.Cap(warmup.Retain(a.Now, a.Retention, wanted, observed), a.MaxImages)
	p.Dropped = plan.Dropped
	p.RequeueAfter = plan.RequeueAfter
	for _, e := range plan.Keep {
		if e.UnusedSince != nil {
			// An unused image's retention is counted down from now, and
			// its unused-since time may be now.
			p.Until = a.Now
		}
	}
	p.DaemonSets = make(map[resource.Name]Lazy, len(plan.Keep))
	p.Ready = make(map[resource.Name]bool, len(plan.Keep))

	failures := make(map[string]WarmupFailure, len(a.Failures))
	for _, f := range a.Failures {
		failures[warmup.Normalize(f.Image)] = f
	}
	for _, e := range plan.Keep {
		dsIn := warmup.DaemonSetInput{
			Pool:         a.Pool,
			Namespace:    a.Namespace,
			Image:        e.Image.Ref,
			HelperImage:  a.HelperImage,
			PullSecrets:  a.PullSecrets,
			Tolerations:  a.Scheduling.Tolerations,
			NodeSelector: a.Scheduling.NodeSelector,
			Labels:       objects.Identity(a.Pool, a.Namespace),
			UnusedSince:  e.UnusedSince,

			PriorityClassName: a.PriorityClassName,
		}
		rn := resource.Name(e.Name)
		p.DaemonSets[rn] = Lazy{Key: lazyKey("warmup", dsIn), Build: func() *unstructured.Unstructured { return objects.ToUnstructured(warmup.DaemonSet(dsIn)) }}

		obs := observedDaemonSet(a.Observed[rn])
		img := warmup.CachedImage(a.Pool, e, obs)
		ready := img.WarmupStatus == poolv1alpha1.WarmupReady
		if f, ok := failures[e.Image.Ref]; ok {
			img.WarmupStatus = poolv1alpha1.WarmupFailed
			img.Message = failureMessage(f)
		}
		p.Ready[rn] = ready
		p.Images = append(p.Images, img)
	}
	return p
}

// annotationsOf reads an object's annotations.
func annotationsOf(o *structpb.Struct) map[string]string {
	a := observed.Field(o, "metadata", "annotations").GetStructValue().GetFields()
	out := make(map[string]string, len(a))
	for k, v := range a {
		out[k] = v.GetStringValue()
	}
	return out
}

// failureMessage describes a warmup failure.
func failureMessage(f WarmupFailure) string {
	msg := f.Reason
	if f.Message != "" {
		msg += ": " + f.Message
	}
	if f.Nodes > 0 {
		msg += fmt.Sprintf(" (on %d pool nodes)", f.Nodes)
	}
	return strings.TrimPrefix(msg, ": ")
}

// pullSecrets splits the Pool's pullSecret and imagePullSecrets into the
// names usable by warmup pods, which run in the pool namespace ns, and
// messages about those that live elsewhere (a pod can only use Secrets of
// its own namespace). A reference without a namespace means ns.
func pullSecrets(ic *poolv1alpha1.ImageConfig, ns string) (names, problems []string) {
	type ref struct {
		field string
		poolv1alpha1.SecretReference
	}
	var refs []ref
	if ic.PullSecret != nil {
		refs = append(refs, ref{"imageConfig.pullSecret", *ic.PullSecret})
	}
	for _, r := range ic.ImagePullSecrets {
		refs = append(refs, ref{"imageConfig.imagePullSecrets", r})
	}
	for _, r := range refs {
		if r.Namespace != "" && r.Namespace != ns {
			problems = append(problems, fmt.Sprintf("%s %s/%s is not in the pool namespace %s, where warmup pods run, and is not used: copy it into %s", r.field, r.Namespace, r.Name, ns, ns))
			continue
		}
		if !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	return names, problems
}

// decideWarm plans the warm set: the warmup DaemonSets, one per image, and
// the condition on the pool's pull secrets.
func decideWarm(in Input, f Facts) (WarmPlan, Outcome) {
	var o Outcome
	ic := in.Spec.ImageConfig
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
	for _, a := range f.Attached {
		if a.QS.Spec.Executor.Image != "" {
			images[a.Key()] = a.QS.Spec.Executor.Image
		}
	}
	names, problems := pullSecrets(ic, in.Namespace)
	if len(problems) > 0 {
		msg := strings.Join(problems, "; ")
		o.condition(CondPullSecrets, metav1.ConditionFalse, "SecretNotInPoolNamespace", msg)
		if in.PreviousConditions[CondPullSecrets] != "SecretNotInPoolNamespace" {
			o.event(true, "SecretNotInPoolNamespace", msg)
		}
	} else if len(names) > 0 {
		o.condition(CondPullSecrets, metav1.ConditionTrue, "InPoolNamespace", "")
	}
	obs := map[resource.Name]*structpb.Struct{}
	for n, u := range in.Observed {
		if strings.HasPrefix(string(n), WarmupPrefix) {
			obs[n] = u
		}
	}
	var failures []WarmupFailure
	if f.Capacity != nil {
		failures = f.Capacity.WarmupFailures
	}
	p := PlanWarmup(WarmArgs{
		Pool: in.Pool, Namespace: in.Namespace, Now: in.Now,
		Cached: ic.CachedImages, AutoCollect: ic.AutoCollectImages == nil || *ic.AutoCollectImages,
		QSImages: images, Retention: retention,
		HelperImage: in.Config.Warmup.HelperImage, PullSecrets: names,
		Scheduling: f.Scheduling, Observed: obs, Failures: failures,
		PriorityClassName: agentPriorityClass(in),
		MaxImages:         maxWarmImages(in.Config),
	})
	if len(p.LeftOut) > 0 && in.PreviousConditions[CondImagesWarm] != reasonWarmSetBounded {
		o.event(true, reasonWarmSetBounded, warmSetBounded(in, p.LeftOut))
	}
	for _, msg := range p.Problems {
		o.event(true, "UnreadableWarmupAnnotation", msg)
	}
	if len(f.Scheduling.NodeSelector) == 0 {
		// Nothing picks the pool's nodes: a DaemonSet now would run on
		// every node of the cluster. Keep what exists until it is fixed.
		for n := range obs {
			o.preserve(n)
		}
		return p, o
	}
	for n, l := range p.DaemonSets {
		// The phase waits for the images, not the DaemonSets.
		o.desireLazy(n, "DaemonSet", "", l, p.Ready[n], false)
	}
	o.RequeueAfter, o.Until = p.RequeueAfter, p.Until
	for _, d := range p.Dropped {
		if u := obs[resource.Name(d)]; u != nil {
			o.event(false, "WarmImageDropped", fmt.Sprintf("image %s left the warm set more than %s ago: its warmup DaemonSet %s is removed",
				observed.String(u, "metadata", "annotations", warmup.AnnotationImage), retention, observed.String(u, "metadata", "name")))
		}
	}
	return p, o
}

// reasonWarmSetBounded is the ImagesWarm reason of a pool that wants more
// images than warmup.maxImages.
const reasonWarmSetBounded = "WarmSetBounded"

// maxWarmImages is the warmup.maxImages setting, defaulted.
func maxWarmImages(cfg *v1beta1.Input) int {
	if w := cfg.Warmup; w != nil && w.MaxImages != nil {
		return int(*w.MaxImages)
	}
	return int(v1beta1.DefaultMaxWarmImages)
}

// warmSetBounded says which images the warm set left out, naming at most
// five of them so the message stays short however many there are.
func warmSetBounded(in Input, left []string) string {
	shown := left[:min(len(left), 5)]
	more := ""
	if n := len(left) - len(shown); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("%s (%d) bounds the warm set: %s%s are not warmed; the pool's cachedImages come first, then the images of the most QueryServices",
		in.Settings.where("warmup.maxImages"), maxWarmImages(in.Config), strings.Join(shown, ", "), more)
}

// boundedCondition is the ImagesWarm condition of a warm set that left
// images out: False, naming them, ahead of what c says of the others.
func boundedCondition(in Input, c Condition, left []string) Condition {
	if len(left) == 0 {
		return c
	}
	msg := warmSetBounded(in, left)
	if c.Message != "" {
		msg += "; " + c.Message
	}
	return Condition{Type: CondImagesWarm, Status: metav1.ConditionFalse, Reason: reasonWarmSetBounded, Message: msg}
}

// imageRefs are the warm images new nodes wait for, as their warmup pods
// name them: those that do not fail to warm (a node would only wait out
// warmup.openAfter for an image that does not pull).
func (p WarmPlan) imageRefs() []string {
	out := make([]string, 0, len(p.Images))
	for _, i := range p.Images {
		if i.WarmupStatus != poolv1alpha1.WarmupFailed {
			out = append(out, i.Image)
		}
	}
	return out
}
